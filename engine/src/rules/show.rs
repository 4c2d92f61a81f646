//! Patterns and templates printed back in rule syntax, for reports.

use super::ast::{Pat, Rule, Ty};
use crate::ir::op::{Level, Syntax};
use crate::ir::DType;

/// Binding strength of a pattern when printed.
fn level(p: &Pat) -> Level {
    crate::deep::grow(|| match p {
        Pat::Op(op, ..) => op.level(),
        Pat::Computed(inner) => level(inner),
        Pat::Lit(v, _) if *v < 0 => Level::Prefix,
        _ => Level::Atom,
    })
}

impl Rule {
    /// A pattern (or template) in rule syntax, for reports.
    pub fn show(&self, p: &Pat) -> String {
        let mut out = String::new();
        self.show_into(p, &mut out);
        out
    }

    /// Appends `p` to `out`: one buffer for the whole pattern, so a long
    /// chain is written in linear time.
    fn show_into(&self, p: &Pat, out: &mut String) {
        crate::deep::grow(|| match p {
            Pat::Var(v) => out.push_str(&self.vars[*v].name),
            Pat::Lit(v, Ty::Fixed(DType::Bool)) => {
                out.push_str(if *v != 0 { "true" } else { "false" })
            }
            Pat::Lit(v, _) => out.push_str(&v.to_string()),
            Pat::Invalid => out.push_str("invalid"),
            Pat::Bound(v, hi) => {
                out.push_str(if *hi { "vmax(" } else { "vmin(" });
                out.push_str(&self.vars[*v].name);
                out.push(')');
            }
            Pat::Computed(inner) => self.show_into(inner, out),
            Pat::Helper(h, args) => {
                out.push_str(h.name());
                self.show_args(args, out);
            }
            Pat::Op(op, ty, args) => match op.info().syntax {
                Syntax::Prefix(s) => {
                    out.push_str(s);
                    self.show_wrapped(&args[0], level(&args[0]) != Level::Atom, out);
                }
                Syntax::Cast => {
                    match ty {
                        Ty::Fixed(d) => out.push_str(&d.to_string()),
                        Ty::Var(k) => {
                            out.push_str("cast<");
                            out.push_str(&self.tyvars[*k].name);
                            out.push('>');
                        }
                    }
                    self.show_wrapped(&args[0], true, out);
                }
                Syntax::Call(name) => {
                    out.push_str(name);
                    self.show_args(args, out);
                }
                Syntax::Infix(token, l) => {
                    self.show_wrapped(&args[0], level(&args[0]) < l, out);
                    out.push(' ');
                    out.push_str(token);
                    out.push(' ');
                    self.show_wrapped(&args[1], level(&args[1]) <= l, out);
                }
                Syntax::Leaf => unreachable!("leaves are not pattern ops"),
            },
        })
    }

    fn show_wrapped(&self, p: &Pat, parens: bool, out: &mut String) {
        if parens {
            out.push('(');
        }
        self.show_into(p, out);
        if parens {
            out.push(')');
        }
    }

    /// `(a, b, ...)`.
    fn show_args(&self, args: &[Pat], out: &mut String) {
        out.push('(');
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.show_into(a, out);
        }
        out.push(')');
    }
}

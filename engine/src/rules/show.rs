//! Patterns and templates printed back in rule syntax, for reports.

use super::ast::{Pat, Rule, Ty};
use crate::ir::DType;
use crate::op::{Level, Syntax};

/// Binding strength of a pattern when printed.
fn level(p: &Pat) -> Level {
    match p {
        Pat::Op(op, ..) => op.level(),
        Pat::Computed(inner) => level(inner),
        Pat::Lit(v, _) if *v < 0 => Level::Prefix,
        _ => Level::Atom,
    }
}

impl Rule {
    /// A pattern (or template) in rule syntax, for reports.
    pub fn show(&self, p: &Pat) -> String {
        match p {
            Pat::Var(v) => self.vars[*v].name.clone(),
            Pat::Lit(v, Ty::Fixed(DType::Bool)) => {
                (if *v != 0 { "true" } else { "false" }).to_string()
            }
            Pat::Lit(v, _) => v.to_string(),
            Pat::Invalid => "invalid".to_string(),
            Pat::Bound(v, hi) => format!(
                "{}({})",
                if *hi { "vmax" } else { "vmin" },
                self.vars[*v].name
            ),
            Pat::Computed(inner) => self.show(inner),
            Pat::Helper(h, args) => {
                let a: Vec<String> = args.iter().map(|x| self.show(x)).collect();
                format!("{}({})", h.name(), a.join(", "))
            }
            Pat::Op(op, ty, args) => {
                let a: Vec<String> = args.iter().map(|x| self.show(x)).collect();
                match op.info().syntax {
                    Syntax::Prefix(s) => {
                        if level(&args[0]) == Level::Atom {
                            format!("{s}{}", a[0])
                        } else {
                            format!("{s}({})", a[0])
                        }
                    }
                    Syntax::Cast => match ty {
                        Ty::Fixed(d) => format!("{d}({})", a[0]),
                        Ty::Var(k) => format!("cast<{}>({})", self.tyvars[*k].name, a[0]),
                    },
                    Syntax::Call(name) => format!("{name}({})", a.join(", ")),
                    Syntax::Infix(token, l) => {
                        let left = if level(&args[0]) < l {
                            format!("({})", a[0])
                        } else {
                            a[0].clone()
                        };
                        let right = if level(&args[1]) <= l {
                            format!("({})", a[1])
                        } else {
                            a[1].clone()
                        };
                        format!("{left} {token} {right}")
                    }
                    Syntax::Leaf => unreachable!("leaves are not pattern ops"),
                }
            }
        }
    }
}

//! Morok's `patterns!` entries, read from the pinned crate's source.
//!
//! `morok-schedule`'s `src/symbolic/patterns.rs` is found through `cargo
//! metadata` of this adapter's workspace (so a `[patch]` of the crate is
//! followed), or given by the user (`--patterns FILE`: a modified copy,
//! to prove a pattern before merging it). Nothing of it is copied here.
//!
//! Each group function whose body is one `cached_patterns!`/`patterns!`
//! call is parsed with `syn`, in the grammar of `morok-macros`'
//! `patterns/parser.rs`, and its entries are named as Morok's matcher
//! tries them (`morok-ir`'s `pattern/simplified.rs`): an entry is added
//! under each op key its left side can have, a `for op in binary [..]`
//! block once per op (ops outer, its entries inner), and the `i`-th entry
//! added under key `K` is `GROUP/K#i` (a pattern with no key, a wildcard,
//! is `GROUP/*#i`): the name [`crate::patterns`] reads from Morok's log.

use proc_macro2::TokenStream;
use std::path::{Path, PathBuf};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Token, braced, bracketed, parenthesized, token};

/// Why the patterns could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cargo metadata of {manifest} failed: {why}")]
    Metadata { manifest: String, why: String },
    #[error("cargo metadata lists no morok-schedule package")]
    NoPackage,
    #[error("cannot read {path}: {why}")]
    Read { path: String, why: String },
    #[error("{path} does not parse as Rust: {why}")]
    Parse { path: String, why: String },
}

/// Where `morok-schedule`'s `patterns.rs` is for this adapter's build.
pub fn locate() -> Result<PathBuf, SourceError> {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let failed = |why: String| SourceError::Metadata {
        manifest: manifest.to_string(),
        why,
    };
    // Offline, for the build's own platform: the lock file already pins
    // every package, and other platforms' packages may not be downloaded.
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", env!("TILEPROOF_MOROK_TARGET")])
        .args(["--manifest-path", manifest])
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| failed(e.to_string()))?;
    let pkg = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "morok-schedule")
        .ok_or(SourceError::NoPackage)?;
    let toml = pkg["manifest_path"]
        .as_str()
        .ok_or(SourceError::NoPackage)?;
    Ok(Path::new(toml)
        .parent()
        .unwrap_or(Path::new("."))
        .join("src/symbolic/patterns.rs"))
}

/// One entry of a group, as the matcher names it.
#[derive(Clone)]
pub struct Entry {
    pub group: String,
    /// `Binary(Mod)#4`, `*#0`.
    pub key: String,
    /// The source line of its left side.
    pub line: usize,
    /// The op a `for` block binds its variable to, with that variable.
    pub op_var: Option<(String, String)>,
    pub rule: std::rc::Rc<Rule>,
}

impl Entry {
    pub fn name(&self) -> String {
        format!("{}/{}", self.group, self.key)
    }
}

/// A group function of the file whose body is one pattern macro, and its
/// entries (or why its pattern list does not parse).
pub struct GroupSource {
    pub name: String,
    pub entries: Result<Vec<Entry>, String>,
}

/// Every group function of `path`.
pub fn read(path: &Path) -> Result<Vec<GroupSource>, SourceError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SourceError::Read {
        path: shown.clone(),
        why: e.to_string(),
    })?;
    let file = syn::parse_file(&text).map_err(|e| SourceError::Parse {
        path: shown,
        why: e.to_string(),
    })?;
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        let Some(mac) = pattern_macro(&f.block) else {
            continue;
        };
        let entries = syn::parse2::<PatternList>(mac)
            .map(|list| entries(&name, &list))
            .map_err(|e| format!("its pattern list does not parse: {e}"));
        out.push(GroupSource { name, entries });
    }
    Ok(out)
}

/// The tokens of the function's one `cached_patterns!`/`patterns!` call.
fn pattern_macro(block: &syn::Block) -> Option<TokenStream> {
    let last = block.stmts.last()?;
    let mac = match last {
        syn::Stmt::Macro(m) => &m.mac,
        syn::Stmt::Expr(Expr::Macro(m), None) => &m.mac,
        _ => return None,
    };
    let name = mac.path.segments.last()?.ident.to_string();
    (name == "cached_patterns" || name == "patterns").then(|| mac.tokens.clone())
}

/// The entries of a group, named in the order the matcher adds them.
fn entries(group: &str, list: &PatternList) -> Vec<Entry> {
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut out = Vec::new();
    let mut add = |rule: &std::rc::Rc<Rule>, op_var: Option<(String, String)>| {
        let op = op_var.as_ref().map(|(_, o)| o.as_str());
        let keys = op_keys(&rule.lhs, op);
        let keys = if keys.is_empty() {
            vec!["*".to_string()]
        } else {
            keys
        };
        for k in keys {
            let n = counts.entry(k.clone()).or_default();
            out.push(Entry {
                group: group.to_string(),
                key: format!("{k}#{n}"),
                line: rule.line,
                op_var: op_var.clone(),
                rule: rule.clone(),
            });
            *n += 1;
        }
    };
    for item in &list.items {
        match item {
            Item::Rule(r) => add(r, None),
            Item::For { var, ops, body } => {
                for op in ops {
                    for r in body {
                        add(r, Some((var.clone(), op.clone())));
                    }
                }
            }
        }
    }
    out
}

// ---- the pattern grammar (morok-macros' `patterns/parser.rs`) ----------------

/// Morok's ALU ops by arity (morok-ir's `UnaryOp`, `BinaryOp`,
/// `TernaryOp`): their op key is `Unary(Op)`, `Binary(Op)`, `Ternary(Op)`.
pub const UNARY: &[&str] = &[
    "Neg",
    "Not",
    "Abs",
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Exp2",
    "Log",
    "Log2",
    "Sin",
    "Cos",
    "Tan",
    "Reciprocal",
    "Trunc",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "Erf",
    "Square",
];
pub const BINARY: &[&str] = &[
    "Add", "Mul", "Sub", "Mod", "Max", "Pow", "Idiv", "Fdiv", "Lt", "Le", "Eq", "Ne", "Gt", "Ge",
    "And", "Or", "Xor", "Shl", "Shr", "Threefry",
];
pub const TERNARY: &[&str] = &["Where", "MulAcc"];

/// The op key of a named op (`OpKey`'s `Debug`).
pub fn key_of(op: &str) -> String {
    if BINARY.contains(&op) {
        format!("Binary({op})")
    } else if UNARY.contains(&op) {
        format!("Unary({op})")
    } else if TERNARY.contains(&op) {
        format!("Ternary({op})")
    } else {
        op.to_string()
    }
}

/// The op keys a left side is indexed under (none: a wildcard), as
/// morok-macros' `compute_op_keys`.
fn op_keys(p: &Pattern, op: Option<&str>) -> Vec<String> {
    match p {
        Pattern::Var(_) | Pattern::Wildcard | Pattern::OptionNone => vec![],
        Pattern::Binding(_, p) | Pattern::OptionSome(p) => op_keys(p, op),
        Pattern::Op { op: o, .. } => vec![key_of(o)],
        Pattern::Const(_) | Pattern::ConstWithValue(..) => vec!["Const".into()],
        Pattern::VConst => vec!["VConst".into()],
        Pattern::AnyConst => vec!["Const".into(), "VConst".into()],
        Pattern::OpVar { .. } => op.map(key_of).into_iter().collect(),
        Pattern::Any(alts) => {
            let mut keys: Vec<String> = Vec::new();
            for a in alts {
                for k in op_keys(a, op) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
            keys
        }
    }
}

pub struct PatternList {
    pub items: Vec<Item>,
}

pub enum Item {
    Rule(std::rc::Rc<Rule>),
    For {
        var: String,
        ops: Vec<String>,
        body: Vec<std::rc::Rc<Rule>>,
    },
}

/// `LHS if GUARD ~> RHS` or `LHS if GUARD => RHS`.
pub struct Rule {
    pub lhs: Pattern,
    /// The left side as written (whitespace normalized).
    pub lhs_text: String,
    pub guard: Option<Expr>,
    /// `~>`: the right side is the result; `=>`: an `Option` of it.
    pub infallible: bool,
    pub rhs: Expr,
    pub line: usize,
}

/// How the operands of an op pattern are matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// `Op(a, b)`: in order.
    Tuple,
    /// `Op[a, b]`: in every order.
    Permute,
    /// `Op { field: p, .. }`.
    Struct,
}

#[derive(Clone, Debug)]
pub enum Pattern {
    Wildcard,
    Var(String),
    Binding(String, Box<Pattern>),
    Op {
        op: String,
        args: Vec<Pattern>,
        /// Field names of a struct pattern.
        fields: Vec<String>,
        how: Args,
        rest: bool,
    },
    /// `@zero`, `@one`, `@const`, `Const(3)`.
    Const(ConstPat),
    /// `name @const(value)`.
    ConstWithValue(String, String),
    /// `name @vconst(values)`, `name @anyconst(values)`.
    VConst,
    AnyConst,
    /// `op(x, y)` with `op` a `for` block's variable.
    OpVar {
        var: String,
        args: Vec<Pattern>,
    },
    Any(Vec<Pattern>),
    OptionSome(Box<Pattern>),
    OptionNone,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ConstPat {
    Any,
    Zero,
    One,
    Int(i64),
    Float,
}

impl Parse for PatternList {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Token![@]) {
            let fork = input.fork();
            fork.parse::<Token![@]>()?;
            if Ident::parse_any(&fork).is_ok_and(|i| i == "context") {
                return Err(input.error("a pattern list with a context"));
            }
        }
        let mut items = Vec::new();
        while !input.is_empty() {
            if input.peek(Token![for]) {
                input.parse::<Token![for]>()?;
                let var: Ident = input.parse()?;
                input.parse::<Token![in]>()?;
                let kind: Ident = input.parse()?;
                let list;
                bracketed!(list in input);
                let ops: Vec<String> = if list.peek(Token![*]) {
                    list.parse::<Token![*]>()?;
                    match kind.to_string().as_str() {
                        "unary" => UNARY,
                        "binary" => BINARY,
                        _ => TERNARY,
                    }
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
                } else {
                    list.parse_terminated(Ident::parse, Token![,])?
                        .into_iter()
                        .map(|i| i.to_string())
                        .collect()
                };
                let body_in;
                braced!(body_in in input);
                let mut body = Vec::new();
                while !body_in.is_empty() {
                    body.push(std::rc::Rc::new(body_in.parse::<Rule>()?));
                    if body_in.peek(Token![,]) {
                        body_in.parse::<Token![,]>()?;
                    }
                }
                items.push(Item::For {
                    var: var.to_string(),
                    ops,
                    body,
                });
            } else {
                items.push(Item::Rule(std::rc::Rc::new(input.parse()?)));
            }
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(PatternList { items })
    }
}

impl Parse for Rule {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let line = input.span().start().line;
        let mut lhs_tokens = TokenStream::new();
        while !input.is_empty()
            && !input.peek(Token![if])
            && !input.peek(Token![~])
            && !input.peek(Token![=>])
        {
            lhs_tokens.extend([input.parse::<proc_macro2::TokenTree>()?]);
        }
        let lhs_text = lhs_tokens.to_string();
        let lhs: Pattern = syn::parse2(lhs_tokens)?;
        let guard = if input.peek(Token![if]) {
            input.parse::<Token![if]>()?;
            let mut tokens = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![~]) && !input.peek(Token![=>]) {
                tokens.extend([input.parse::<proc_macro2::TokenTree>()?]);
            }
            Some(syn::parse2(tokens)?)
        } else {
            None
        };
        let infallible = if input.peek(Token![~]) {
            input.parse::<Token![~]>()?;
            input.parse::<Token![>]>()?;
            true
        } else {
            input.parse::<Token![=>]>()?;
            false
        };
        // The right side runs to the next top-level comma (a closure's
        // parameters hold none at the top level of its `|..|`).
        let mut tokens = TokenStream::new();
        let mut pipes = 0;
        let closure = input.peek(Token![|]);
        while !input.is_empty() && !(input.peek(Token![,]) && (!closure || pipes >= 2)) {
            let tt: proc_macro2::TokenTree = input.parse()?;
            if matches!(&tt, proc_macro2::TokenTree::Punct(p) if p.as_char() == '|') {
                pipes += 1;
            }
            tokens.extend([tt]);
        }
        let rhs = syn::parse2(tokens)?;
        Ok(Rule {
            lhs,
            lhs_text,
            guard,
            infallible,
            rhs,
            line,
        })
    }
}

impl Parse for Pattern {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let first = single(input)?;
        if !input.peek(Token![|]) {
            return Ok(first);
        }
        let mut alts = vec![first];
        while input.peek(Token![|]) {
            input.parse::<Token![|]>()?;
            alts.push(single(input)?);
        }
        Ok(Pattern::Any(alts))
    }
}

fn args(content: ParseStream) -> syn::Result<(Vec<Pattern>, bool)> {
    let mut out = Vec::new();
    while !content.is_empty() {
        if content.peek(Token![..]) {
            content.parse::<Token![..]>()?;
            return Ok((out, true));
        }
        out.push(content.parse()?);
        if content.peek(Token![,]) {
            content.parse::<Token![,]>()?;
        }
    }
    Ok((out, false))
}

fn single(input: ParseStream) -> syn::Result<Pattern> {
    if input.peek(token::Paren) {
        let content;
        parenthesized!(content in input);
        // `(Add | Mul)(args)`: one alternative per op.
        let fork = content.fork();
        let mut ops = Vec::new();
        while let Ok(i) = fork.parse::<Ident>() {
            ops.push(i.to_string());
            if fork.parse::<Token![|]>().is_err() {
                break;
            }
        }
        if fork.is_empty() && !ops.is_empty() && input.peek(token::Paren) {
            let a;
            parenthesized!(a in input);
            let (args, rest) = args(&a)?;
            return Ok(Pattern::Any(
                ops.into_iter()
                    .map(|op| Pattern::Op {
                        op,
                        args: args.clone(),
                        fields: vec![],
                        how: Args::Tuple,
                        rest,
                    })
                    .collect(),
            ));
        }
        return content.parse();
    }
    if input.peek(Token![_]) {
        input.parse::<Token![_]>()?;
        return Ok(Pattern::Wildcard);
    }
    if input.peek(Token![@]) {
        input.parse::<Token![@]>()?;
        let i = Ident::parse_any(input)?;
        return Ok(Pattern::Const(match i.to_string().as_str() {
            "zero" => ConstPat::Zero,
            "one" => ConstPat::One,
            "const" => ConstPat::Any,
            other => return Err(syn::Error::new(i.span(), format!("unknown @{other}"))),
        }));
    }
    let ident: Ident = input.parse()?;
    let name = ident.to_string();
    if name == "None" {
        return Ok(Pattern::OptionNone);
    }
    if name == "Some" {
        let c;
        parenthesized!(c in input);
        return Ok(Pattern::OptionSome(Box::new(c.parse()?)));
    }
    if input.peek(Token![@]) {
        let fork = input.fork();
        fork.parse::<Token![@]>()?;
        if let Ok(kw) = Ident::parse_any(&fork)
            && fork.peek(token::Paren)
            && ["const", "vconst", "anyconst"].contains(&kw.to_string().as_str())
        {
            input.parse::<Token![@]>()?;
            Ident::parse_any(input)?;
            let c;
            parenthesized!(c in input);
            let v: Ident = c.parse()?;
            let v = v.to_string();
            return Ok(match kw.to_string().as_str() {
                "const" => Pattern::ConstWithValue(name, v),
                "vconst" => Pattern::VConst,
                _ => Pattern::AnyConst,
            });
        }
        input.parse::<Token![@]>()?;
        return Ok(Pattern::Binding(name, Box::new(single(input)?)));
    }
    if input.peek(token::Bracket) {
        let c;
        bracketed!(c in input);
        let (args, _) = args(&c)?;
        return Ok(Pattern::Op {
            op: name,
            args,
            fields: vec![],
            how: Args::Permute,
            rest: false,
        });
    }
    if input.peek(token::Paren) {
        let c;
        parenthesized!(c in input);
        if name == "Const" {
            if c.peek(Token![_]) {
                c.parse::<Token![_]>()?;
                return Ok(Pattern::Const(ConstPat::Any));
            }
            return Ok(Pattern::Const(match c.parse::<syn::Lit>()? {
                syn::Lit::Int(i) => ConstPat::Int(i.base10_parse()?),
                _ => ConstPat::Float,
            }));
        }
        let (args, rest) = args(&c)?;
        if name.starts_with(|ch: char| ch.is_lowercase()) {
            return Ok(Pattern::OpVar { var: name, args });
        }
        return Ok(Pattern::Op {
            op: name,
            args,
            fields: vec![],
            how: Args::Tuple,
            rest,
        });
    }
    if input.peek(token::Brace) {
        let c;
        braced!(c in input);
        let (mut args, mut fields, mut rest) = (Vec::new(), Vec::new(), false);
        while !c.is_empty() {
            if c.peek(Token![..]) {
                c.parse::<Token![..]>()?;
                rest = true;
                break;
            }
            let f: Ident = c.parse()?;
            let p = if c.peek(Token![:]) {
                c.parse::<Token![:]>()?;
                c.parse()?
            } else {
                Pattern::Var(f.to_string())
            };
            fields.push(f.to_string());
            args.push(p);
            if c.peek(Token![,]) {
                c.parse::<Token![,]>()?;
            }
        }
        return Ok(Pattern::Op {
            op: name,
            args,
            fields,
            how: Args::Struct,
            rest,
        });
    }
    Ok(Pattern::Var(name))
}

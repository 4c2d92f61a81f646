//! The text format: lexer, expression grammar and the `var`/`expr` file
//! format (docs/formats.md).
//!
//! The expression grammar is shared with the rule DSL ([`crate::rules`]):
//! both parse into the same [`Ast`]; this module then resolves identifiers
//! to declared variables and builds nodes, the DSL resolves them to pattern
//! variables.
//!
//! Every error carries a line and column; no input makes the parser panic.
//! Nothing here recurses on the input's depth (parsing, building, dropping
//! an [`Ast`]), so a chain or nesting of any length is read: the only limit
//! is memory.

use crate::ir::op::{infix_op, prefix_op, punctuation, Class, Level};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::meaning::domain::{gate, Constraint};
use smallvec::{smallvec, SmallVec};
use std::fmt;
use std::sync::OnceLock;

/// A position in the input, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

/// A parse or type error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub span: Span,
    pub msg: String,
}

impl ParseError {
    pub fn new(span: Span, msg: impl Into<String>) -> ParseError {
        ParseError {
            span,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.span.line, self.span.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

pub type PResult<T> = Result<T, ParseError>;

// ---- lexer ------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Int(i128),
    Ident(String),
    /// Punctuation and operators, as written.
    Punct(&'static str),
    Eol,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::Eol => f.write_str("end of line"),
        }
    }
}

/// Punctuation that is not an operator: the file format's and the rule
/// DSL's structure.
const STRUCTURE: [&str; 11] = ["=>", "->", "(", ")", "[", "]", ",", ":", "=", "{", "}"];

/// Every punctuation token, longest first (so `<<` is not read as `<`).
fn punct() -> &'static [&'static str] {
    static ALL: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<&'static str> = punctuation().chain(STRUCTURE).collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.len()));
        v.dedup();
        v
    })
}

/// Splits one line into tokens (a `#` starts a comment). `line` is 1-based.
///
/// Columns count characters; the line is walked by byte offset (no copy of
/// its characters, no string per number), which is most of what reading a
/// short program costs.
pub fn lex_line(text: &str, line: u32) -> PResult<Vec<(Tok, Span)>> {
    // About a token per one and a half characters, sized once (growing the
    // list token by token was a tenth of parsing a short program); bounded,
    // so that a long line grows as before.
    let mut out = Vec::with_capacity((text.len() * 2 / 3 + 2).min(1024));
    let bytes = text.as_bytes();
    let at = |pos: usize| text[pos..].chars().next();
    // `pos`: the byte offset; `col`: the characters before it.
    let (mut pos, mut col) = (0usize, 0u32);
    while let Some(c) = at(pos) {
        let span = Span { line, col: col + 1 };
        if c == '#' {
            break;
        }
        if c.is_whitespace() {
            pos += c.len_utf8();
            col += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = col;
            let mut v: Option<u64> = Some(0);
            while pos < bytes.len() && (bytes[pos].is_ascii_digit() || bytes[pos] == b'_') {
                if bytes[pos] != b'_' {
                    let d = u64::from(bytes[pos] - b'0');
                    v = v.and_then(|v| v.checked_mul(10)?.checked_add(d));
                }
                pos += 1;
                col += 1;
            }
            if at(pos).is_some_and(char::is_alphanumeric) {
                return Err(ParseError::new(
                    Span { line, col: col + 1 },
                    "a number must not run into a name",
                ));
            }
            let v = v.ok_or_else(|| {
                ParseError::new(
                    Span {
                        line,
                        col: start + 1,
                    },
                    "integer literal too large",
                )
            })?;
            out.push((Tok::Int(i128::from(v)), span));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = pos;
            while let Some(c) = at(pos).filter(|&c| c.is_alphanumeric() || c == '_') {
                pos += c.len_utf8();
                col += 1;
            }
            out.push((Tok::Ident(text[start..pos].to_string()), span));
            continue;
        }
        let rest = &bytes[pos..];
        // Punctuation is ASCII: its first byte rules most of it out.
        match punct()
            .iter()
            .find(|p| p.as_bytes()[0] == rest[0] && rest.starts_with(p.as_bytes()))
        {
            Some(p) => {
                out.push((Tok::Punct(p), span));
                pos += p.len();
                col += p.len() as u32;
            }
            None => return Err(ParseError::new(span, format!("unexpected character `{c}`"))),
        }
    }
    out.push((
        Tok::Eol,
        Span {
            line,
            col: col + text[pos..].chars().count() as u32 + 1,
        },
    ));
    Ok(out)
}

// ---- AST ----------------------------------------------------------------------

/// An expression as written, before names are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ast {
    pub kind: AstKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AstKind {
    Int(i128),
    Bool(bool),
    Invalid,
    Name(String),
    /// `-x` or `!x`.
    Unary(Op, Box<Ast>),
    /// An infix operator; `a > b` is read as `b < a` (and `>=` likewise).
    Binary(Op, Box<Ast>, Box<Ast>),
    /// `name(args)` or `name<T>(args)`, e.g. `min(a, b)`, `where(c, a, b)`,
    /// `i32(x)`, `cast<T>(x)`, and the DSL's guard helpers.
    Call {
        name: String,
        ty: Option<(String, Span)>,
        args: Vec<Ast>,
    },
    /// `x:T`, a type annotation (rule DSL only).
    Typed(Box<Ast>, String, Span),
}

/// The names an expression mentions, with their positions, left to right
/// (an explicit stack: no recursion on depth).
pub fn names(a: &Ast) -> Vec<(&str, Span)> {
    let mut out = Vec::new();
    let mut stack = vec![a];
    while let Some(e) = stack.pop() {
        match &e.kind {
            AstKind::Name(n) => out.push((n.as_str(), e.span)),
            AstKind::Unary(_, x) | AstKind::Typed(x, ..) => stack.push(x),
            AstKind::Binary(_, x, y) => {
                stack.push(y);
                stack.push(x);
            }
            AstKind::Call { args, .. } => stack.extend(args.iter().rev()),
            AstKind::Int(_) | AstKind::Bool(_) | AstKind::Invalid => {}
        }
    }
    out
}

/// Dropping a deep expression frees its nodes from a list, not by
/// recursion: the derived drop would recurse once per level.
impl Drop for Ast {
    fn drop(&mut self) {
        let mut stack: Vec<Ast> = Vec::new();
        let mut kind = std::mem::replace(&mut self.kind, AstKind::Invalid);
        loop {
            match kind {
                AstKind::Unary(_, x) | AstKind::Typed(x, ..) => stack.push(*x),
                AstKind::Binary(_, a, b) => {
                    stack.push(*a);
                    stack.push(*b);
                }
                AstKind::Call { args, .. } => stack.extend(args),
                AstKind::Int(_) | AstKind::Bool(_) | AstKind::Invalid | AstKind::Name(_) => {}
            }
            match stack.pop() {
                // Emptied before it is dropped, so its own drop stops here.
                Some(mut e) => kind = std::mem::replace(&mut e.kind, AstKind::Invalid),
                None => return,
            }
        }
    }
}

/// A cursor over the tokens of one line.
pub struct Cursor {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    /// Accept `x:T` annotations (the rule DSL).
    pub allow_types: bool,
}

impl Cursor {
    pub fn new(toks: Vec<(Tok, Span)>) -> Cursor {
        Cursor {
            toks,
            pos: 0,
            allow_types: false,
        }
    }

    pub fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    pub fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }

    pub fn span(&self) -> Span {
        self.toks[self.pos].1
    }

    /// The token at the cursor, which moves past it (and stays at the
    /// end of the line once there: a cursor never runs out, so it is not
    /// an `Iterator`).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> (Tok, Span) {
        if self.pos + 1 < self.toks.len() {
            // Never read again (the cursor only looks ahead): taken, not
            // cloned, so a name is not copied once more.
            let (tok, span) = &mut self.toks[self.pos];
            self.pos += 1;
            (std::mem::replace(tok, Tok::Eol), *span)
        } else {
            self.toks[self.pos].clone()
        }
    }

    pub fn at_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    pub fn at_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == s)
    }

    pub fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.at_punct(p);
        if hit {
            self.next();
        }
        hit
    }

    pub fn eat_ident(&mut self, s: &str) -> bool {
        let hit = self.at_ident(s);
        if hit {
            self.next();
        }
        hit
    }

    pub fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.at_punct(p) {
            Ok(self.next().1)
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }

    pub fn expect_ident(&mut self, s: &str) -> PResult<Span> {
        if self.at_ident(s) {
            Ok(self.next().1)
        } else {
            Err(self.unexpected(&format!("`{s}`")))
        }
    }

    pub fn name(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek() {
            Tok::Ident(_) => match self.next() {
                (Tok::Ident(s), sp) => Ok((s, sp)),
                _ => unreachable!("peeked"),
            },
            _ => Err(self.unexpected(what)),
        }
    }

    /// A possibly negative integer literal.
    pub fn int(&mut self) -> PResult<(i128, Span)> {
        let sp = self.span();
        let neg = self.eat_punct("-");
        match self.peek().clone() {
            Tok::Int(v) => {
                self.next();
                Ok((if neg { -v } else { v }, sp))
            }
            _ => Err(self.unexpected("an integer")),
        }
    }

    /// `in [LO, HI]`: both bounds as written (signed), with their spans.
    pub fn interval(&mut self) -> PResult<((i128, Span), (i128, Span))> {
        self.expect_ident("in")?;
        self.expect_punct("[")?;
        let lo = self.int()?;
        self.expect_punct(",")?;
        let hi = self.int()?;
        self.expect_punct("]")?;
        Ok((lo, hi))
    }

    pub fn expect_eol(&mut self) -> PResult<()> {
        if *self.peek() == Tok::Eol {
            Ok(())
        } else {
            Err(self.unexpected("end of line"))
        }
    }

    pub fn unexpected(&self, wanted: &str) -> ParseError {
        ParseError::new(
            self.span(),
            format!("expected {wanted}, found {}", self.peek()),
        )
    }

    /// Parses a whole expression.
    ///
    /// Operator precedence parsing with explicit stacks, so neither a long
    /// chain (`x + x + ...`) nor deep nesting (`((((x))))`, `- - - x`,
    /// `f(f(f(x)))`) is limited by the thread's stack: generated kernels
    /// are large, and the input is as deep as they are.
    pub fn expr(&mut self) -> PResult<Ast> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut operands: Vec<Ast> = Vec::new();
        loop {
            // Expecting an operand: open prefixes, parentheses and calls
            // until a leaf is read.
            let leaf = loop {
                let span = self.span();
                let prefix = match self.peek() {
                    Tok::Punct(p) => prefix_op(p),
                    _ => None,
                };
                if let Some(op) = prefix {
                    self.next();
                    // A literal right after `-` is a negative constant: that
                    // is how the printer writes one.
                    if let (Op::Neg, Tok::Int(v)) = (op, self.peek()) {
                        let kind = AstKind::Int(-*v);
                        self.next();
                        break Ast { kind, span };
                    }
                    frames.push(Frame::Prefix(op, span));
                    continue;
                }
                if self.eat_punct("(") {
                    frames.push(Frame::Paren);
                    continue;
                }
                match self.primary()? {
                    Primary::Done(a) => break a,
                    Primary::Call { name, ty, span } => {
                        if self.eat_punct(")") {
                            let kind = AstKind::Call {
                                name,
                                ty,
                                args: Vec::new(),
                            };
                            break Ast { kind, span };
                        }
                        frames.push(Frame::Call {
                            name,
                            ty,
                            span,
                            args: Vec::new(),
                        });
                    }
                }
            };
            operands.push(leaf);
            // After an operand: close what it completes, then read an
            // infix operator (and go back for its right operand) or return.
            loop {
                while let Some(&Frame::Prefix(op, span)) = frames.last() {
                    frames.pop();
                    let x = operands.pop().expect("a prefix has its operand");
                    operands.push(Ast {
                        kind: AstKind::Unary(op, Box::new(x)),
                        span,
                    });
                }
                let span = self.span();
                let found = match self.peek() {
                    Tok::Punct(p) => infix_op(p),
                    Tok::Ident(s) => infix_op(s),
                    _ => None,
                };
                // Operators bind left to right within a level: close every
                // pending one at least as tight as this one.
                let level = found.map_or(Level::Or, |(op, _)| op.level());
                while let Some(Frame::Infix(_, _, l, _)) = frames.last() {
                    if found.is_some() && *l < level {
                        break;
                    }
                    let Some(Frame::Infix(op, swap, _, span)) = frames.pop() else {
                        unreachable!("checked above")
                    };
                    let rhs = operands.pop().expect("an infix op has two operands");
                    let lhs = operands.pop().expect("an infix op has two operands");
                    let (a, b) = if swap { (rhs, lhs) } else { (lhs, rhs) };
                    operands.push(Ast {
                        kind: AstKind::Binary(op, Box::new(a), Box::new(b)),
                        span,
                    });
                }
                if let Some((op, swap)) = found {
                    self.next();
                    frames.push(Frame::Infix(op, swap, level, span));
                    break;
                }
                match frames.last_mut() {
                    None => return Ok(operands.pop().expect("the expression")),
                    Some(Frame::Paren) => {
                        self.expect_punct(")")?;
                        frames.pop();
                    }
                    Some(Frame::Call { args, .. }) => {
                        args.push(operands.pop().expect("a call argument"));
                        if self.eat_punct(",") {
                            break;
                        }
                        self.expect_punct(")")?;
                        let Some(Frame::Call {
                            name,
                            ty,
                            span,
                            args,
                        }) = frames.pop()
                        else {
                            unreachable!("matched above")
                        };
                        operands.push(Ast {
                            kind: AstKind::Call { name, ty, args },
                            span,
                        });
                    }
                    Some(Frame::Prefix(..) | Frame::Infix(..)) => {
                        unreachable!("closed above")
                    }
                }
            }
        }
    }

    /// An operand that needs no stack: a literal, a name (with its type
    /// annotation in the rule DSL), or the head of a call up to its `(`.
    fn primary(&mut self) -> PResult<Primary> {
        let (tok, span) = self.next();
        let kind = match tok {
            Tok::Int(v) => AstKind::Int(v),
            Tok::Ident(name) => match name.as_str() {
                "true" => AstKind::Bool(true),
                "false" => AstKind::Bool(false),
                "invalid" => AstKind::Invalid,
                _ if self.at_punct("(") || (self.at_punct("<") && name == "cast") => {
                    let ty = if self.eat_punct("<") {
                        let t = self.name("a type")?;
                        self.expect_punct(">")?;
                        Some(t)
                    } else {
                        None
                    };
                    self.expect_punct("(")?;
                    return Ok(Primary::Call { name, ty, span });
                }
                _ => {
                    if self.allow_types && self.at_punct(":") {
                        self.next();
                        let (t, tspan) = self.name("a type after `:`")?;
                        let inner = Ast {
                            kind: AstKind::Name(name),
                            span,
                        };
                        AstKind::Typed(Box::new(inner), t, tspan)
                    } else {
                        AstKind::Name(name)
                    }
                }
            },
            other => {
                return Err(ParseError::new(
                    span,
                    format!("expected an expression, found {other}"),
                ));
            }
        };
        Ok(Primary::Done(Ast { kind, span }))
    }
}

/// What [`Cursor::expr`] has open while it reads an operand.
enum Frame {
    /// A prefix operator and its position.
    Prefix(Op, Span),
    /// An infix operator (swapped: `>` read as `<`), its level and position.
    Infix(Op, bool, Level, Span),
    Paren,
    /// A call and the arguments read so far.
    Call {
        name: String,
        ty: Option<(String, Span)>,
        span: Span,
        args: Vec<Ast>,
    },
}

enum Primary {
    Done(Ast),
    Call {
        name: String,
        ty: Option<(String, Span)>,
        span: Span,
    },
}

/// Parses one expression that must fill the rest of the line.
pub fn parse_ast(text: &str, line: u32) -> PResult<Ast> {
    let mut c = Cursor::new(lex_line(text, line)?);
    let e = c.expr()?;
    c.expect_eol()?;
    Ok(e)
}

// ---- building nodes from the AST ---------------------------------------------

/// Builds a node from an expression whose names are declared variables of
/// `g`. Integer literals take the dtype their context asks for (`index` when
/// nothing does).
///
/// Three passes over the flattened expression, none recursive: the dtype
/// each subexpression fixes on its own (bottom-up), the dtype each literal
/// is asked for (top-down), then the nodes, in the order a recursive
/// builder would visit them, so that the first error is the one it would
/// report.
pub fn build(g: &mut Graph, e: &Ast) -> PResult<NodeId> {
    let mut f = Flat::new(e);
    f.intrinsic(g);
    f.wants();
    f.build(g)
}

/// How a node of the expression is built.
#[derive(Clone, Copy)]
enum Build {
    Leaf,
    /// An op over the operands (`Unary`, `Binary`, an op's call).
    Op(Op),
    /// `i32(x)`: a cast, or the constant itself when `x` is a literal.
    Cast(DType),
    /// An error found before the operands are built.
    Error,
}

/// An expression flattened into an arena: the operands of node `i` are
/// `kids[i]`, numbered after `i`.
struct Flat<'a> {
    ast: Vec<&'a Ast>,
    kids: Vec<std::ops::Range<usize>>,
    how: Vec<Build>,
    /// The dtype the node fixes on its own, if its leaves fix one.
    intrinsic: Vec<Option<DType>>,
    /// The dtype its context asks of it.
    want: Vec<Option<DType>>,
}

impl<'a> Flat<'a> {
    fn new(root: &'a Ast) -> Flat<'a> {
        // Room for a short expression's nodes up front.
        let mut f = Flat {
            ast: Vec::with_capacity(32),
            kids: Vec::with_capacity(32),
            how: Vec::with_capacity(32),
            intrinsic: Vec::new(),
            want: Vec::new(),
        };
        f.ast.push(root);
        let mut i = 0;
        while i < f.ast.len() {
            let e = f.ast[i];
            let (how, args): (Build, SmallVec<[&'a Ast; 3]>) = match &e.kind {
                AstKind::Unary(op, x) => (Build::Op(*op), smallvec![&**x]),
                AstKind::Binary(op, a, b) => (Build::Op(*op), smallvec![&**a, &**b]),
                AstKind::Call { name, ty, args } => {
                    let how = match (ty, DType::from_name(name).filter(|d| d.is_int())) {
                        (Some(_), _) => Build::Error,
                        (None, Some(dt)) => Build::Cast(dt),
                        (None, None) => Op::by_call(name).map_or(Build::Error, Build::Op),
                    };
                    (how, args.iter().collect())
                }
                _ => (Build::Leaf, SmallVec::new()),
            };
            let first = f.ast.len();
            f.ast.extend(args);
            f.kids.push(first..f.ast.len());
            f.how.push(how);
            i += 1;
        }
        f
    }

    fn intrinsic(&mut self, g: &Graph) {
        let n = self.ast.len();
        self.intrinsic = vec![None; n];
        for i in (0..n).rev() {
            let kids = self.kids[i].clone();
            let first = |r: std::ops::Range<usize>| r.map(|k| self.intrinsic[k]).find_map(|d| d);
            let of_op = |op: Op| match op.class() {
                Class::Compare | Class::Logic => Some(DType::Bool),
                Class::Arith => first(kids.clone()),
                Class::Select => first(kids.start + 1..kids.end),
                Class::Cast | Class::Leaf => None,
            };
            self.intrinsic[i] = match &self.ast[i].kind {
                AstKind::Int(_) | AstKind::Typed(..) => None,
                AstKind::Bool(_) => Some(DType::Bool),
                AstKind::Invalid => Some(DType::Index),
                AstKind::Name(n) => g.var_named(n).map(|v| g.var(v).dtype),
                AstKind::Unary(op, _) | AstKind::Binary(op, ..) => of_op(*op),
                AstKind::Call { name, args, .. } => match DType::from_name(name) {
                    Some(d) if d.is_int() => Some(d),
                    _ => match Op::by_call(name) {
                        Some(op) if op.arity() == args.len() => of_op(op),
                        _ => None,
                    },
                },
            };
        }
    }

    /// Integer literals take the dtype their siblings (or the context)
    /// fix.
    fn wants(&mut self) {
        let n = self.ast.len();
        self.want = vec![None; n];
        for i in 0..n {
            let kids = self.kids[i].clone();
            let sibling = |r: std::ops::Range<usize>| r.map(|k| self.intrinsic[k]).find_map(|d| d);
            let want = self.want[i];
            match self.how[i] {
                Build::Op(op) => {
                    let (first, rest) = match op.class() {
                        Class::Logic => (Some(DType::Bool), Some(DType::Bool)),
                        Class::Compare => {
                            let s = sibling(kids.clone());
                            (s, s)
                        }
                        Class::Arith => {
                            let s = sibling(kids.clone()).or(want);
                            (s, s)
                        }
                        Class::Select => {
                            let arms = sibling(kids.start + 1..kids.end).or(want);
                            (Some(DType::Bool), arms)
                        }
                        Class::Cast | Class::Leaf => (None, None),
                    };
                    for k in kids.clone() {
                        self.want[k] = if k == kids.start { first } else { rest };
                    }
                }
                // `i32(5)` is the i32 constant 5, not a cast of the index
                // constant 5 (which is `i32(index(5))`).
                Build::Cast(dt) => {
                    for k in kids {
                        if let AstKind::Int(_) = self.ast[k].kind {
                            self.want[k] = Some(dt);
                        }
                    }
                }
                Build::Leaf | Build::Error => {}
            }
        }
    }

    fn build(&self, g: &mut Graph) -> PResult<NodeId> {
        let mut built = vec![NodeId::NONE; self.ast.len()];
        // (node, its operands are built)
        let mut stack = vec![(0usize, false)];
        while let Some((i, ready)) = stack.pop() {
            if !ready {
                self.check(i)?;
                stack.push((i, true));
                stack.extend(self.kids[i].clone().rev().map(|k| (k, false)));
                continue;
            }
            built[i] = self.node(g, i, &built)?;
        }
        Ok(built[0])
    }

    /// The errors a node shows before its operands are built.
    fn check(&self, i: usize) -> PResult<()> {
        let e = self.ast[i];
        let err = |msg: String| Err(ParseError::new(e.span, msg));
        match &e.kind {
            AstKind::Typed(..) => err("type annotations belong to the rule DSL".into()),
            AstKind::Call { name, ty, args } => {
                if let Some((_, sp)) = ty {
                    return Err(ParseError::new(
                        *sp,
                        "type parameters belong to the rule DSL",
                    ));
                }
                let n = match self.how[i] {
                    Build::Cast(_) => 1,
                    Build::Op(op) => op.arity(),
                    _ => return err(format!("unknown function `{name}`")),
                };
                if args.len() != n {
                    return err(format!(
                        "`{name}` takes {}, got {}",
                        crate::text::print::count(n, "argument"),
                        args.len()
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Builds node `i` from its built operands.
    fn node(&self, g: &mut Graph, i: usize, built: &[NodeId]) -> PResult<NodeId> {
        let e = self.ast[i];
        let err = |msg: String| ParseError::new(e.span, msg);
        let src: SmallVec<[NodeId; 3]> = self.kids[i].clone().map(|k| built[k]).collect();
        match self.how[i] {
            Build::Op(op) => g
                .try_mk(op, None, &src)
                .map_err(|t| ParseError::new(e.span, t.0)),
            Build::Cast(dt) => {
                if let AstKind::Int(_) = self.ast[self.kids[i].start].kind {
                    return Ok(src[0]);
                }
                g.try_mk(Op::Cast, Some(dt), &src)
                    .map_err(|t| ParseError::new(e.span, t.0))
            }
            Build::Error => unreachable!("reported before the operands"),
            Build::Leaf => match &e.kind {
                AstKind::Int(v) => {
                    let dt = match self.want[i] {
                        Some(DType::Bool) => {
                            return Err(err("expected a bool, found an integer".into()))
                        }
                        Some(d) => d,
                        None => DType::Index,
                    };
                    let (lo, hi) = dt.bounds();
                    if *v < lo as i128 || *v > hi as i128 {
                        return Err(err(format!("constant {v} does not fit {dt}")));
                    }
                    Ok(g.cnst(*v as i64, dt))
                }
                AstKind::Bool(b) => Ok(g.bool_const(*b)),
                AstKind::Invalid => Ok(g.invalid()),
                AstKind::Name(n) => match g.var_named(n) {
                    Some(v) => Ok(g.var_node(v)),
                    None => Err(err(format!(
                        "unknown variable `{n}` (declare it with `var {n} in [lo, hi]`)"
                    ))),
                },
                _ => unreachable!("every other kind has operands or an error"),
            },
        }
    }
}

// ---- the file format -------------------------------------------------------------

/// A parsed text file: declared variables, result expressions and (for
/// `tileproof check`) expected expressions.
#[derive(Clone)]
pub struct Program {
    pub graph: Graph,
    /// The `expr` lines, in order: a tuple when there are several.
    pub outputs: Vec<NodeId>,
    /// The `expect` lines, in order.
    pub expects: Vec<NodeId>,
    /// The leading comment lines (without `#`), e.g. a corpus case's header.
    pub header: Vec<String>,
    /// The `constraint` lines (an XLA map's constraints), as declared: the
    /// `expr` and `expect` roots are already under them
    /// ([`crate::meaning::domain::gate`]).
    pub constraints: Vec<Constraint>,
    /// The `expect constraint` lines: the target's own domain, when it is
    /// not the source's (`None`: the `expect` roots are under
    /// [`Program::constraints`] too).
    pub expect_constraints: Option<Vec<Constraint>>,
}

impl Program {
    /// A program of `outputs` alone (an indexing map's results), already
    /// under `constraints` ([`crate::meaning::domain::gate`]).
    pub fn of_results(graph: Graph, outputs: Vec<NodeId>, constraints: Vec<Constraint>) -> Program {
        Program {
            graph,
            outputs,
            expects: Vec::new(),
            header: Vec::new(),
            constraints,
            expect_constraints: None,
        }
    }
}

/// Reads `E in [LO, HI]` (a constraint line of either format; the cursor
/// is at `E`) and builds it in `g`: `E` an `index` expression, `LO <= HI`.
/// `allowed` vets the expression as written (an indexing map's ops).
pub fn parse_constraint(
    c: &mut Cursor,
    g: &mut Graph,
    allowed: impl Fn(&Ast) -> PResult<()>,
) -> PResult<(Constraint, Span)> {
    let start = c.span();
    let e = c.expr()?;
    allowed(&e)?;
    let ((lo, lspan), (hi, _)) = c.interval()?;
    let (lo, hi) = interval_i64(lo, hi, lspan, "a constraint")?;
    let expr = build(g, &e)?;
    let t = g.node(expr).dtype;
    if t != DType::Index {
        return Err(ParseError::new(
            start,
            format!("a constraint bounds an `index` expression, not a {t}"),
        ));
    }
    Ok((Constraint { expr, lo, hi }, start))
}

/// Bounds `[lo, hi]` of `what` as `i64`, `lo <= hi` (an error at `span`).
pub fn interval_i64(lo: i128, hi: i128, span: Span, what: &str) -> PResult<(i64, i64)> {
    match (i64::try_from(lo), i64::try_from(hi)) {
        (Ok(l), Ok(h)) if l <= h => Ok((l, h)),
        _ => Err(ParseError::new(
            span,
            format!("bad bounds [{lo}, {hi}] for {what}"),
        )),
    }
}

/// Puts `roots` under the constraints (`span`: the first constraint's, for
/// an error).
pub fn gate_roots(
    g: &mut Graph,
    cs: &[Constraint],
    roots: &[NodeId],
    span: Span,
) -> PResult<Vec<NodeId>> {
    gate(g, cs, roots).map_err(|e| ParseError::new(span, e.to_string()))
}

/// Parses the text format:
///
/// ```text
/// # comment
/// var r0 in [0, 7]          # an index variable with inclusive bounds
/// var n: i32 in [-5, 5]     # a variable of another integer dtype
/// var p: bool               # a bool variable
/// constraint r0 mod 2 in [0, 0]  # the domain: where every constraint holds
/// expr (r0*4) // 8          # a result; several form a tuple
/// expect r0 // 2            # what `tileproof check` compares against
/// expect constraint r0 mod 4 in [0, 2]  # the target's own domain
/// ```
pub fn parse_program(text: &str) -> PResult<Program> {
    let mut p = Program {
        // Room for a node per four characters: most programs then never
        // grow their arena or rehash their table while they are read.
        graph: Graph::with_capacity(text.len() / 4),
        outputs: Vec::new(),
        expects: Vec::new(),
        header: Vec::new(),
        constraints: Vec::new(),
        expect_constraints: None,
    };
    let mut in_header = true;
    let mut expect_spans = Vec::new();
    let mut constraint_span = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i as u32 + 1;
        let trimmed = raw.trim_start();
        if let Some(c) = trimmed.strip_prefix('#') {
            if in_header {
                p.header.push(c.strip_prefix(' ').unwrap_or(c).to_string());
            }
            continue;
        }
        let mut c = Cursor::new(lex_line(raw, line)?);
        if *c.peek() == Tok::Eol {
            continue;
        }
        in_header = false;
        let (kw, kspan) = c.name("`var`, `constraint`, `expr` or `expect`")?;
        match kw.as_str() {
            "var" => parse_var(&mut c, &mut p.graph)?,
            "constraint" => {
                let (k, _) = parse_constraint(&mut c, &mut p.graph, |_| Ok(()))?;
                c.expect_eol()?;
                p.constraints.push(k);
                constraint_span.get_or_insert(kspan);
            }
            "expect" if matches!(c.peek(), Tok::Ident(w) if w == "constraint") => {
                c.next();
                let (k, _) = parse_constraint(&mut c, &mut p.graph, |_| Ok(()))?;
                c.expect_eol()?;
                p.expect_constraints.get_or_insert_with(Vec::new).push(k);
                constraint_span.get_or_insert(kspan);
            }
            "expr" | "expect" => {
                let e = c.expr()?;
                c.expect_eol()?;
                let id = build(&mut p.graph, &e)?;
                if kw == "expr" {
                    p.outputs.push(id);
                } else {
                    p.expects.push(id);
                    expect_spans.push(kspan);
                }
            }
            other => {
                return Err(ParseError::new(
                    kspan,
                    format!("expected `var`, `constraint`, `expr` or `expect`, found `{other}`"),
                ))
            }
        }
    }
    if p.outputs.is_empty() {
        let line = text.lines().count() as u32 + 1;
        return Err(ParseError::new(Span { line, col: 1 }, "no `expr` line"));
    }
    if let Some(span) = constraint_span {
        p.outputs = gate_roots(&mut p.graph, &p.constraints, &p.outputs, span)?;
        let target = p.expect_constraints.as_ref().unwrap_or(&p.constraints);
        p.expects = gate_roots(&mut p.graph, target, &p.expects, span)?;
    }
    // The k-th `expect` line is compared with the k-th `expr` line: it
    // must have its type.
    for (k, (&e, &span)) in p.expects.iter().zip(&expect_spans).enumerate() {
        if let Some(&o) = p.outputs.get(k) {
            let (want, got) = (p.graph.node(o).dtype, p.graph.node(e).dtype);
            if want != got {
                return Err(ParseError::new(
                    span,
                    format!(
                        "`expect` line {} has type {got}, but `expr` line {} has type {want}",
                        k + 1,
                        k + 1
                    ),
                ));
            }
        }
    }
    Ok(p)
}

fn parse_var(c: &mut Cursor, g: &mut Graph) -> PResult<()> {
    let (name, nspan) = c.name("a variable name")?;
    if is_reserved(&name) {
        return Err(ParseError::new(
            nspan,
            format!("`{name}` is a reserved word"),
        ));
    }
    let mut dtype = DType::Index;
    if c.eat_punct(":") {
        let (t, tspan) = c.name("a dtype")?;
        dtype = DType::from_name(&t)
            .ok_or_else(|| ParseError::new(tspan, format!("unknown dtype `{t}`")))?;
    }
    let (lo, hi) = if dtype == DType::Bool && *c.peek() == Tok::Eol {
        (0, 1)
    } else {
        let ((lo, lspan), (hi, hspan)) = c.interval()?;
        let (tlo, thi) = dtype.bounds();
        for (v, sp) in [(lo, lspan), (hi, hspan)] {
            if v < tlo as i128 || v > thi as i128 {
                return Err(ParseError::new(
                    sp,
                    format!("bound {v} does not fit {dtype}"),
                ));
            }
        }
        if lo > hi {
            return Err(ParseError::new(lspan, format!("empty range [{lo}, {hi}]")));
        }
        (lo as i64, hi as i64)
    };
    c.expect_eol()?;
    g.declare_var(&name, dtype, lo, hi)
        .map_err(|e| ParseError::new(nspan, e.0))?;
    Ok(())
}

/// The format's keywords.
const KEYWORDS: [&str; 11] = [
    "var",
    "constraint",
    "expr",
    "expect",
    "in",
    "true",
    "false",
    "invalid",
    "cast",
    "rule",
    "if",
];

/// Every token of the text format: keywords, dtype names, every op's
/// spellings (from the op table) and the punctuation. A fuzzer's
/// dictionary (`fuzz/examples/parse_dict.rs`) is made from it.
pub fn tokens() -> Vec<&'static str> {
    let mut t: Vec<&'static str> = KEYWORDS.to_vec();
    t.extend(DType::ALL.iter().map(|d| d.name()));
    for op in Op::all() {
        let i = op.info();
        let main = match i.syntax {
            crate::ir::op::Syntax::Infix(s, _) | crate::ir::op::Syntax::Prefix(s) => Some(s),
            crate::ir::op::Syntax::Call(s) => Some(s),
            crate::ir::op::Syntax::Leaf | crate::ir::op::Syntax::Cast => None,
        };
        t.extend([main, i.alias, i.swapped, i.call].into_iter().flatten());
    }
    t.extend([
        "(",
        ")",
        ",",
        "[",
        "]",
        ":",
        "#",
        "\n",
        "-",
        "0",
        "9223372036854775807",
    ]);
    t.sort_unstable();
    t.dedup();
    t
}

/// Words that cannot name a variable: the format's keywords, dtype names
/// and every op's word spellings.
pub fn is_reserved(name: &str) -> bool {
    KEYWORDS.contains(&name)
        || DType::from_name(name).is_some()
        || Op::by_call(name).is_some()
        || infix_op(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_lines_gate_every_root_and_print_back() {
        let text = "var x in [0, 20]\nvar y in [0, 3]\nconstraint x mod 4 in [1, 1]\nconstraint x + y in [-2, 12]\nexpr x // 4\nexpr y\nexpect x // 4\nexpect y\n";
        let mut p = parse_program(text).unwrap();
        assert_eq!(p.constraints.len(), 2);
        for &r in p.outputs.iter().chain(&p.expects) {
            assert_eq!(p.graph.node(r).op, Op::Where);
        }
        let (outputs, declared) = (p.outputs.clone(), p.constraints.clone());
        assert_eq!(
            crate::text::print::result_lines(&mut p.graph, &outputs, &declared),
            "constraint x mod 4 in [1, 1]\nconstraint x + y in [-2, 12]\nexpr x // 4\nexpr y\n"
        );
        // Without constraints, the roots as they are.
        assert_eq!(
            crate::text::print::result_lines(&mut p.graph, &outputs, &[]),
            crate::text::print::program(&p.graph, &outputs)
                .lines()
                .filter(|l| l.starts_with("expr"))
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
    }

    #[test]
    fn a_bad_constraint_line_is_an_error_at_its_line_and_column() {
        let e = |t: &str| parse_program(t).err().map(|e| (e.span.line, e.span.col));
        let v = "var x in [0, 7]\nvar b: bool\n";
        // a bool result cannot be a masked lane
        assert_eq!(
            e(&format!("{v}constraint x in [1, 2]\nexpr b\n")),
            Some((3, 1))
        );
        // a bool expression is not bounded
        assert_eq!(
            e(&format!("{v}constraint b in [0, 1]\nexpr x\n")),
            Some((3, 12))
        );
        // empty bounds, missing bounds, an unknown variable
        assert_eq!(
            e(&format!("{v}constraint x in [2, 1]\nexpr x\n")),
            Some((3, 18))
        );
        assert_eq!(e(&format!("{v}constraint x\nexpr x\n")), Some((3, 13)));
        assert_eq!(
            e(&format!("{v}constraint x + z in [0, 1]\nexpr x\n")),
            Some((3, 16))
        );
    }

    #[test]
    fn the_fuzz_dictionary_holds_every_spelling_the_lexer_knows() {
        let t = tokens();
        for p in crate::ir::op::punctuation() {
            assert!(t.contains(&p), "`{p}` missing");
        }
        for op in Op::all() {
            if let Some(c) = op.info().call {
                assert!(t.contains(&c), "`{c}` missing");
            }
        }
        for w in KEYWORDS {
            assert!(is_reserved(w) && t.contains(&w), "`{w}`");
        }
    }
}

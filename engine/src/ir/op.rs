//! The op table: every operation of the IR, one row each, with everything
//! the rest of the project needs to know about it: arity, typing class,
//! commutativity, division family, spellings (text format, function-call
//! form, XLA) and binding strength.
//!
//! The parser, the printer, the rule DSL, the XLA reader and printer, IR
//! typing, the generators and the tests read this table; no other place
//! lists ops. What an op *means* is [`crate::meaning::semantics`], written once over
//! the primitives each implementation (interpreter, SMT, JIT) provides.
//!
//! Adding an op: a variant and a row here, its primitives in the three
//! implementations (`arith` in the interpreter, the SMT encodings and the
//! JIT), a range transfer function in [`crate::ir::ranges`] (proved by
//! `verify::ranges`), and, for an op with an operand-dependent undefined
//! case, a line in [`crate::meaning::semantics::apply`].

use crate::ir::dtype::DType;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// How an op types its operands and result; also which part of the
/// semantics applies to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A constant, a variable or `invalid`.
    Leaf,
    /// Integer operands of one dtype, a result of that dtype.
    Arith,
    /// One integer operand; the result is the node's (integer) dtype.
    Cast,
    /// Two integer operands of one dtype, a bool result.
    Compare,
    /// Bool operands, a bool result.
    Logic,
    /// `where(c, a, b)`: a bool condition, two arms of one dtype.
    Select,
}

/// How a division rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Toward zero: `/ %` (C, Rust, every CPU and GPU).
    Trunc,
    /// Toward negative infinity: `// mod` (Python, tinygrad, XLA, MLIR).
    Floor,
    /// Toward positive infinity: `ceildiv`.
    Ceil,
}

impl Family {
    /// The families with both a quotient and a remainder op.
    pub const PAIRED: [Family; 2] = [Family::Trunc, Family::Floor];

    pub fn name(self) -> &'static str {
        match self {
            Family::Trunc => "trunc",
            Family::Floor => "floor",
            Family::Ceil => "ceil",
        }
    }

    /// The family's quotient op.
    pub fn quotient(self) -> Op {
        Op::division(self, Part::Quotient).expect("every family has a quotient")
    }

    /// The family's remainder op (the ceiling family has none).
    pub fn remainder(self) -> Option<Op> {
        Op::division(self, Part::Remainder)
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The quotient or the remainder of a division.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Quotient,
    Remainder,
}

/// Binding strength of infix operators, loosest first (the parser's
/// levels). Prefix operators bind tighter than any infix one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Or = 1,
    And,
    Xor,
    Equality,
    Relational,
    BitAnd,
    Shift,
    Additive,
    Multiplicative,
    Prefix,
    Atom,
}

impl Level {
    /// Every infix level, loosest first.
    pub const INFIX: [Level; 9] = [
        Level::Or,
        Level::And,
        Level::Xor,
        Level::Equality,
        Level::Relational,
        Level::BitAnd,
        Level::Shift,
        Level::Additive,
        Level::Multiplicative,
    ];
}

/// How an op is written in the text format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Leaves have their own spellings (literals, names, `invalid`).
    Leaf,
    /// `-x`, `!x`.
    Prefix(&'static str),
    /// `a + b`.
    Infix(&'static str, Level),
    /// `min(a, b)`, `where(c, a, b)`.
    Call(&'static str),
    /// `i32(x)`: the target dtype's name.
    Cast,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// A short name for reports, op-keyed tables and the peer protocol.
    pub name: &'static str,
    pub arity: usize,
    pub class: Class,
    /// `a op b == b op a`.
    pub commutative: bool,
    pub division: Option<(Family, Part)>,
    pub syntax: Syntax,
    /// Another spelling of an infix op as a function call (`floordiv(a, b)`).
    pub call: Option<&'static str>,
    /// Another infix spelling (`a floordiv b` for `a // b`).
    pub alias: Option<&'static str>,
    /// An infix spelling that reads with the operands swapped (`a > b` is
    /// `b < a`).
    pub swapped: Option<&'static str>,
    /// The spelling in XLA's indexing maps, for ops they have.
    pub xla: Option<&'static str>,
}

const fn row(name: &'static str, arity: usize, class: Class, syntax: Syntax) -> OpInfo {
    OpInfo {
        name,
        arity,
        class,
        commutative: false,
        division: None,
        syntax,
        call: None,
        alias: None,
        swapped: None,
        xla: None,
    }
}

const fn leaf(name: &'static str) -> OpInfo {
    row(name, 0, Class::Leaf, Syntax::Leaf)
}

const fn prefix(name: &'static str, token: &'static str, class: Class) -> OpInfo {
    row(name, 1, class, Syntax::Prefix(token))
}

const fn infix(name: &'static str, token: &'static str, level: Level, class: Class) -> OpInfo {
    row(name, 2, class, Syntax::Infix(token, level))
}

impl OpInfo {
    const fn commutative(mut self) -> OpInfo {
        self.commutative = true;
        self
    }

    const fn division(mut self, f: Family, p: Part) -> OpInfo {
        self.division = Some((f, p));
        self
    }

    const fn call(mut self, name: &'static str) -> OpInfo {
        self.call = Some(name);
        self
    }

    const fn alias(mut self, word: &'static str) -> OpInfo {
        self.alias = Some(word);
        self
    }

    const fn swapped(mut self, token: &'static str) -> OpInfo {
        self.swapped = Some(token);
        self
    }

    const fn xla(mut self, spelling: &'static str) -> OpInfo {
        self.xla = Some(spelling);
        self
    }
}

/// Declares [`Op`] and its table from one list, so that a variant without
/// a row (or a row without a variant) cannot compile.
macro_rules! op_table {
    ($( $(#[$doc:meta])* $variant:ident $(($payload:ty = $placeholder:expr))? => $info:expr; )*) => {
        /// Operations. Leaves carry their payload; the others take their
        /// operands from the node's sources.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op {
            $( $(#[$doc])* $variant $(($payload))?, )*
        }

        /// Every op with its row, in declaration order (leaves with a
        /// placeholder payload).
        pub const OPS: &[(Op, OpInfo)] = &[ $( (Op::$variant $(($placeholder))?, $info), )* ];

        impl Op {
            /// The op's position in [`OPS`] (payloads aside: every constant
            /// has the position of `Const`).
            pub fn index(self) -> usize {
                #[allow(non_camel_case_types, clippy::enum_variant_names)]
                enum Ordinal { $( $variant, )* }
                match self {
                    $( Op::$variant { .. } => Ordinal::$variant as usize, )*
                }
            }
        }
    };
}

op_table! {
    /// An integer constant, or a bool constant (0 or 1) when the dtype is bool.
    Const(i64 = 0) => leaf("const");
    /// A variable of the graph's variable table.
    Var(u32 = 0) => leaf("var");
    /// The masked-lane value of dtype `index`.
    Invalid => leaf("invalid");
    Neg => prefix("neg", "-", Class::Arith).xla("-");
    Not => prefix("not", "!", Class::Logic);
    /// Conversion to the node's dtype.
    Cast => row("cast", 1, Class::Cast, Syntax::Cast);
    Add => infix("add", "+", Level::Additive, Class::Arith).commutative().xla("+");
    Sub => infix("sub", "-", Level::Additive, Class::Arith).xla("-");
    Mul => infix("mul", "*", Level::Multiplicative, Class::Arith).commutative().xla("*");
    Min => row("min", 2, Class::Arith, Syntax::Call("min")).commutative();
    Max => row("max", 2, Class::Arith, Syntax::Call("max")).commutative();
    /// `/`: truncating division.
    Div => infix("div", "/", Level::Multiplicative, Class::Arith)
        .division(Family::Trunc, Part::Quotient);
    /// `%`: truncating remainder (sign of the dividend).
    Rem => infix("rem", "%", Level::Multiplicative, Class::Arith)
        .division(Family::Trunc, Part::Remainder);
    /// `//` (also written `floordiv`): floor division.
    FloorDiv => infix("floordiv", "//", Level::Multiplicative, Class::Arith)
        .division(Family::Floor, Part::Quotient).alias("floordiv").call("floordiv").xla("floordiv");
    /// `mod`: floor remainder (sign of the divisor).
    Mod => infix("mod", "mod", Level::Multiplicative, Class::Arith)
        .division(Family::Floor, Part::Remainder).call("mod").xla("mod");
    /// `ceildiv`: division rounding toward positive infinity.
    CeilDiv => infix("ceildiv", "ceildiv", Level::Multiplicative, Class::Arith)
        .division(Family::Ceil, Part::Quotient).call("ceildiv").xla("ceildiv");
    /// `<<`: `a * 2^b`; the shift amount must lie in `[0, bits)`.
    Shl => infix("shl", "<<", Level::Shift, Class::Arith);
    /// `>>`: arithmetic shift right, `floor(a / 2^b)`; the shift amount
    /// must lie in `[0, bits)`.
    Shr => infix("shr", ">>", Level::Shift, Class::Arith);
    /// `&`: bitwise and of the two's complement representations.
    BitAnd => infix("bitand", "&", Level::BitAnd, Class::Arith).commutative();
    Lt => infix("lt", "<", Level::Relational, Class::Compare).swapped(">");
    Le => infix("le", "<=", Level::Relational, Class::Compare).swapped(">=");
    Eq => infix("eq", "==", Level::Equality, Class::Compare).commutative();
    Ne => infix("ne", "!=", Level::Equality, Class::Compare).commutative();
    And => infix("and", "&&", Level::And, Class::Logic).commutative();
    Or => infix("or", "||", Level::Or, Class::Logic).commutative();
    /// `^` on bools.
    Xor => infix("xor", "^", Level::Xor, Class::Logic).commutative();
    /// `where(c, a, b)`.
    Where => row("where", 3, Class::Select, Syntax::Call("where"));
}

impl Op {
    /// The op's row.
    pub fn info(self) -> &'static OpInfo {
        &OPS[self.index()].1
    }

    /// A short name used in reports and by `Op`-keyed tables.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn arity(self) -> usize {
        self.info().arity
    }

    pub fn class(self) -> Class {
        self.info().class
    }

    /// Operand order does not matter: `a op b == b op a`.
    pub fn is_commutative(self) -> bool {
        self.info().commutative
    }

    /// Either division family: `/ % // mod ceildiv`.
    pub fn is_divmod(self) -> bool {
        self.info().division.is_some()
    }

    /// A quotient (`/ // ceildiv`): `MIN / -1` overflows.
    pub fn is_quotient(self) -> bool {
        matches!(self.info().division, Some((_, Part::Quotient)))
    }

    /// A shift: its second operand is an amount that must lie in
    /// `[0, bits)`.
    pub fn is_shift(self) -> bool {
        matches!(self, Op::Shl | Op::Shr)
    }

    /// Integer operations (integer operands, integer result).
    pub fn is_int_alu(self) -> bool {
        matches!(self.class(), Class::Arith | Class::Cast)
    }

    pub fn is_comparison(self) -> bool {
        self.class() == Class::Compare
    }

    /// `! && || ^`.
    pub fn is_bool_logic(self) -> bool {
        self.class() == Class::Logic
    }

    /// The infix spelling of a binary operator.
    pub fn infix(self) -> Option<&'static str> {
        match self.info().syntax {
            Syntax::Infix(t, _) => Some(t),
            _ => None,
        }
    }

    /// Binding strength when printed: infix level, prefix, or atomic.
    pub fn level(self) -> Level {
        match self.info().syntax {
            Syntax::Infix(_, l) => l,
            Syntax::Prefix(_) => Level::Prefix,
            _ => Level::Atom,
        }
    }

    /// Every typing of the op: (operand dtypes, result dtype), from its
    /// class.
    pub fn signatures(self) -> Vec<(Vec<DType>, DType)> {
        let ints = DType::INTS;
        let n = self.arity();
        match self.class() {
            Class::Leaf => Vec::new(),
            Class::Arith => ints.iter().map(|&d| (vec![d; n], d)).collect(),
            Class::Cast => ints
                .iter()
                .flat_map(|&to| ints.iter().map(move |&from| (vec![from], to)))
                .collect(),
            Class::Compare => ints.iter().map(|&d| (vec![d; n], DType::Bool)).collect(),
            Class::Logic => vec![(vec![DType::Bool; n], DType::Bool)],
            Class::Select => std::iter::once(DType::Bool)
                .chain(ints)
                .map(|d| (vec![DType::Bool, d, d], d))
                .collect(),
        }
    }

    /// The division op of a family and part (`/`, `%`, `//`, `mod`,
    /// `ceildiv`); `None` for the ceiling remainder, which has no op.
    pub fn division(f: Family, p: Part) -> Option<Op> {
        Op::all().find(|op| op.info().division == Some((f, p)))
    }

    /// The non-leaf op whose [`OpInfo::name`] is `name`.
    pub fn by_name(name: &str) -> Option<Op> {
        Op::all().find(|op| op.name() == name)
    }

    /// The op written as the function call `name(...)` (`min`, `where`,
    /// `floordiv`, ...); casts are not ops of this kind (their name is a
    /// dtype).
    pub fn by_call(name: &str) -> Option<Op> {
        Op::all().find(|op| {
            let i = op.info();
            i.call == Some(name) || matches!(i.syntax, Syntax::Call(c) if c == name)
        })
    }

    /// Every non-leaf op, in table order.
    pub fn all() -> impl Iterator<Item = Op> {
        OPS.iter()
            .filter(|(_, i)| i.class != Class::Leaf)
            .map(|(op, _)| *op)
    }

    /// The non-leaf ops of one class.
    pub fn of_class(class: Class) -> impl Iterator<Item = Op> {
        Op::all().filter(move |op| op.class() == class)
    }

    /// The binary integer arithmetic ops (`+ - * min max`, both division
    /// families, shifts, `&`).
    pub fn int_binary() -> impl Iterator<Item = Op> {
        Op::of_class(Class::Arith).filter(|op| op.arity() == 2)
    }
}

/// The binary op an infix token spells, and whether it reads with the
/// operands swapped (`a > b` is `b < a`).
pub fn infix_op(token: &str) -> Option<(Op, bool)> {
    static TABLE: OnceLock<FxHashMap<&'static str, (Op, bool)>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut m = FxHashMap::default();
            for op in Op::all().filter(|op| op.arity() == 2) {
                let i = op.info();
                if let Syntax::Infix(t, _) = i.syntax {
                    m.insert(t, (op, false));
                }
                if let Some(a) = i.alias {
                    m.insert(a, (op, false));
                }
                if let Some(s) = i.swapped {
                    m.insert(s, (op, true));
                }
            }
            m
        })
        .get(token)
        .copied()
}

/// The prefix op a token spells (`-`, `!`).
pub fn prefix_op(token: &str) -> Option<Op> {
    Op::all().find(|op| matches!(op.info().syntax, Syntax::Prefix(t) if t == token))
}

/// Every operator token made of punctuation (`+`, `<=`, `>>`, ...), for
/// the lexer.
pub fn punctuation() -> impl Iterator<Item = &'static str> {
    Op::all()
        .flat_map(|op| {
            let i = op.info();
            let main = match i.syntax {
                Syntax::Infix(t, _) | Syntax::Prefix(t) => Some(t),
                _ => None,
            };
            [main, i.alias, i.swapped]
        })
        .flatten()
        .filter(|t| !t.chars().next().is_some_and(|c| c.is_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_belongs_to_its_variant() {
        for (i, (op, info)) in OPS.iter().enumerate() {
            assert_eq!(op.index(), i, "{}", info.name);
            assert!(std::ptr::eq(op.info(), info));
        }
    }

    #[test]
    fn names_and_spellings_are_unique() {
        let mut names: Vec<&str> = OPS.iter().map(|(_, i)| i.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OPS.len());
        // One op per (infix spelling, arity): `-` is both neg and sub.
        let mut spell: Vec<(&str, usize)> = Op::all()
            .flat_map(|op| {
                let i = op.info();
                let mut v = Vec::new();
                match i.syntax {
                    Syntax::Infix(t, _) | Syntax::Prefix(t) => v.push((t, i.arity)),
                    Syntax::Call(c) => v.push((c, i.arity)),
                    _ => {}
                }
                v.extend(i.alias.map(|a| (a, i.arity)));
                v.extend(i.swapped.map(|s| (s, i.arity)));
                v
            })
            .collect();
        let n = spell.len();
        spell.sort();
        spell.dedup();
        assert_eq!(spell.len(), n);
    }

    #[test]
    fn arity_matches_the_class() {
        for op in Op::all() {
            let ok = match op.class() {
                Class::Arith => op.arity() == 1 || op.arity() == 2,
                Class::Cast => op.arity() == 1,
                Class::Compare => op.arity() == 2,
                Class::Logic => op.arity() == 1 || op.arity() == 2,
                Class::Select => op.arity() == 3,
                Class::Leaf => false,
            };
            assert!(ok, "{}", op.name());
        }
    }
}

//! Dtypes and the width `index` is checked at.

use std::fmt;

/// The dtype of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// The abstract index type: a mathematical integer that must fit in the
    /// width being checked (overflow is undefined). The engine itself works
    /// at 64 bits.
    Index,
    /// 32-bit two's complement, wrapping.
    I32,
    /// 64-bit two's complement, wrapping.
    I64,
    Bool,
}

impl DType {
    pub const INTS: [DType; 3] = [DType::Index, DType::I32, DType::I64];
    pub const ALL: [DType; 4] = [DType::Index, DType::I32, DType::I64, DType::Bool];

    pub fn is_int(self) -> bool {
        self != DType::Bool
    }

    /// Inclusive value bounds the engine assumes for this dtype. `index` is
    /// bounded by 64 bits because no checked width is wider.
    pub fn bounds(self) -> (i64, i64) {
        match self {
            DType::Index | DType::I64 => (i64::MIN, i64::MAX),
            DType::I32 => (i32::MIN as i64, i32::MAX as i64),
            DType::Bool => (0, 1),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::Index => "index",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::Bool => "bool",
        }
    }

    pub fn from_name(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The width `index` is checked at: 8, 16, 32 or 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Width(pub u32);

impl Width {
    pub const ALL: [Width; 4] = [Width(8), Width(16), Width(32), Width(64)];
    pub const W64: Width = Width(64);

    /// The smallest W-bit value (saturating at 128 bits, for the wide
    /// arithmetic the verifier's guards use).
    pub fn min(self) -> i128 {
        if self.0 >= 128 {
            i128::MIN
        } else {
            -(1i128 << (self.0 - 1))
        }
    }

    pub fn max(self) -> i128 {
        if self.0 >= 128 {
            i128::MAX
        } else {
            (1i128 << (self.0 - 1)) - 1
        }
    }

    pub fn fits(self, v: i128) -> bool {
        self.min() <= v && v <= self.max()
    }

    /// Bits of a value of `dtype` at this width: `index` is W bits, the
    /// concrete types are their own width whatever W is, a bool is one bit.
    pub fn bits(self, dtype: DType) -> u32 {
        match dtype {
            DType::Index => self.0,
            DType::I32 => 32,
            DType::I64 => 64,
            DType::Bool => 1,
        }
    }

    /// Inclusive bounds of values of `dtype` at this width.
    pub fn dtype_bounds(self, dtype: DType) -> (i128, i128) {
        match dtype {
            DType::Bool => (0, 1),
            _ => {
                let w = Width(self.bits(dtype));
                (w.min(), w.max())
            }
        }
    }
}

impl fmt::Display for Width {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

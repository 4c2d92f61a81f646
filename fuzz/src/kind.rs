//! What a finding found ([`Kind`]: the name of the check that failed, or
//! of the way a subject failed) and sets of check kinds to run. Its own
//! module because both the checks and the subjects (whose refusals carry a
//! kind) need it, and neither may import the other's back.

use std::fmt;

/// What a finding found: the name of the check that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Cap,
    Oracle,
    Range,
    Idempotent,
    Jit,
    Validate,
    Lower,
    Panic,
    /// A peer answered `error` on a case it should accept.
    PeerError,
    /// A peer exited or closed its output.
    Crash,
    /// A peer did not answer within the per-case timeout.
    Hang,
    /// A peer wrote something that is not a valid answer.
    Garbage,
    /// A peer's range analysis gives a node bounds that exclude a value it
    /// takes (`crate::bounds`).
    Bounds,
}

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::Cap,
        Kind::Oracle,
        Kind::Range,
        Kind::Idempotent,
        Kind::Jit,
        Kind::Validate,
        Kind::Lower,
        Kind::Panic,
        Kind::PeerError,
        Kind::Crash,
        Kind::Hang,
        Kind::Garbage,
        Kind::Bounds,
    ];

    /// The name used in reports and corpus file names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cap => "cap",
            Kind::Oracle => "oracle",
            Kind::Range => "range",
            Kind::Idempotent => "idempotent",
            Kind::Jit => "jit",
            Kind::Validate => "validate",
            Kind::Lower => "lower",
            Kind::Panic => "panic",
            Kind::PeerError => "peer-error",
            Kind::Crash => "crash",
            Kind::Hang => "hang",
            Kind::Garbage => "garbage",
            Kind::Bounds => "unsound-bounds",
        }
    }

    /// Kinds that a subject reports about itself (the engine's cap, a
    /// peer's failures): they always count, whatever checks are selected.
    pub fn is_subject_failure(self) -> bool {
        matches!(
            self,
            Kind::Cap | Kind::Panic | Kind::PeerError | Kind::Crash | Kind::Hang | Kind::Garbage
        )
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A set of check kinds to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindSet(u16);

impl KindSet {
    /// Every check (validation still needs a validator to run).
    pub const ALL: KindSet = KindSet(0xffff);
    /// Only the checks that cannot be skipped: `cap` and `panic`.
    pub const NONE: KindSet = KindSet(0);

    /// Just `kind` (plus `cap` and `panic`, which always run).
    pub fn only(kind: Kind) -> KindSet {
        KindSet(kind.bit())
    }

    pub fn with(self, kind: Kind) -> KindSet {
        KindSet(self.0 | kind.bit())
    }

    pub fn without(self, kind: Kind) -> KindSet {
        KindSet(self.0 & !kind.bit())
    }

    pub fn contains(self, kind: Kind) -> bool {
        kind.is_subject_failure() || self.0 & kind.bit() != 0
    }

    /// Whether every kind of `other` is one of these.
    pub fn includes(self, other: KindSet) -> bool {
        self.0 & other.0 == other.0
    }
}

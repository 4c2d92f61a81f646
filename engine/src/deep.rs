//! Recursion on an input's depth, without a stack overflow.
//!
//! The core passes (parsing, building, the rewriter, the printer, the
//! ranges) keep their own stacks or run in node-id order. The rule system
//! (patterns, templates and guards, matched with continuations and encoded
//! for Z3) is naturally recursive over a rule's syntax tree; there each
//! recursive step goes through [`grow`], which moves onto a fresh stack
//! segment on the heap when the current one runs low. A rule's depth is then
//! limited by memory, as an expression's is, and small rules pay only a
//! stack-pointer check.

/// Below this much free stack, the next step gets a new segment.
const RED_ZONE: usize = 128 * 1024;

/// The size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f` (one step of a recursion on an input's depth) with enough stack.
#[inline]
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

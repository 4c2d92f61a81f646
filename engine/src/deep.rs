//! Recursion on an input's depth, without a stack overflow.
//!
//! The core passes (parsing, building, the rewriter, the printer, the
//! ranges) keep their own stacks or run in node-id order. The rule system
//! (patterns, templates and guards, matched with continuations and encoded
//! for Z3) is naturally recursive over a rule's syntax tree; there each
//! recursive step goes through [`grow`], which moves onto a fresh stack
//! segment on the heap when the current one runs low. A rule's depth is then
//! limited by memory, as an expression's is, and small rules pay only a
//! comparison of the stack pointer with a thread-local floor.

use std::cell::Cell;

/// Below this much free stack, the next step gets a new segment.
const RED_ZONE: usize = 128 * 1024;

/// The size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

thread_local! {
    /// The lowest stack address at which a step still has [`RED_ZONE`] free
    /// on the segment it runs on, while a step checked through `stacker`
    /// runs (the stack grows down); `usize::MAX` outside one. Asking
    /// `stacker` at every step (a lazily initialized thread-local and a
    /// call through a closure) was a measurable part of matching a rule.
    static FLOOR: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The address of a local of the caller's frame: the stack pointer, near
/// enough for a red zone of [`RED_ZONE`].
#[inline(always)]
fn stack_pointer() -> usize {
    let here = 0u8;
    std::ptr::addr_of!(here) as usize
}

/// Runs `f` (one step of a recursion on an input's depth) with enough stack.
#[inline]
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    if stack_pointer() > FLOOR.with(Cell::get) {
        return f();
    }
    checked(f)
}

/// [`grow`] through `stacker`: onto a new segment if this one is low; the
/// floor of the segment `f` runs on is set for the steps inside it, and the
/// caller's restored after (also when `f` unwinds).
#[inline(never)]
fn checked<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            FLOOR.with(|c| c.set(self.0));
        }
    }
    stacker::maybe_grow(RED_ZONE, SEGMENT, || {
        let floor = stacker::remaining_stack()
            .and_then(|left| stack_pointer().checked_sub(left)?.checked_add(RED_ZONE))
            .unwrap_or(usize::MAX);
        let _restore = Restore(FLOOR.with(|c| c.replace(floor)));
        f()
    })
}

#[cfg(test)]
mod tests {
    use super::grow;

    fn depth(n: u64) -> u64 {
        grow(|| if n == 0 { 0 } else { 1 + depth(n - 1) })
    }

    #[test]
    fn a_recursion_deeper_than_the_thread_stack_completes() {
        // 64 KiB of frame per level on a 1 MiB thread: a few levels exhaust
        // the thread's own stack; the segments take the rest.
        fn heavy(n: u64) -> u64 {
            grow(|| {
                let pad = std::hint::black_box([0u8; 64 * 1024]);
                if n == 0 {
                    u64::from(pad[0])
                } else {
                    1 + heavy(n - 1) + u64::from(pad[1])
                }
            })
        }
        let got = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| (heavy(200), depth(100_000)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(got, (200, 100_000));
    }
}

//! The corpus: findings stored as text cases, replayed forever after.
//!
//! A corpus case is a file in the engine's text format (`var` / `expr`
//! lines, read by `engine::parse::parse_program`), so it survives changes
//! to the generators and reads well in review. Its leading `#` lines say
//! what failed and how to reproduce it:
//!
//! ```text
//! # tileproof finding: oracle
//! # failure: value-differs (output 1) at x = -3; source (1), target (-3) [...]
//! # point: x = -3
//! # rules: rem_drop_multiple (1x)
//! # origin: generator expr, seed 7, case 42 (case seed 0x...)
//! # width: 64
//! # reproduce: tileproof replay corpus/oracle-5f0c8e2a91.txt
//! var x in [-3, 3]
//! expr (x * 4 + 1) % 4
//! expect 1 % 4
//! ```
//!
//! The `expect` lines record what the engine produced when the case was
//! found (so `tileproof check` on the file shows the original
//! counterexample); [`replay`] ignores them and re-simplifies the `expr`
//! lines with the current engine. The `# width:` line is the width the case
//! is checked at (`tileproof check` reads it too).
//!
//! Files are named after what they found plus a hash of their `var`/`expr`
//! lines (`oracle-5f0c8e2a91.txt`), so the same shrunk case found twice is
//! one file. They are written atomically (a temporary file in the same
//! directory, synced, then renamed), so a campaign killed with `kill -9`
//! leaves either the whole case or nothing, and never a torn file.
//!
//! - `format`: a finding's file ([`Entry`], its header and case), and a
//!   missed simplification's;
//! - `store`: writing (atomically), naming, listing and reading files;
//! - `replay`: a case simplified again and judged ([`judge`]);
//! - `reclassify`: a kept peer finding rewritten with its class now.

mod format;
mod reclassify;
mod replay;
mod store;

pub use format::*;
pub use reclassify::*;
pub use replay::*;
pub use store::*;

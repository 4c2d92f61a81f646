//! The kept Morok reproducers, one module each (see build.rs).
include!(concat!(env!("OUT_DIR"), "/reproducers.rs"));

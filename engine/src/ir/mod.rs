//! The bottom layer: what a program is. The op table ([`op`]), dtypes and
//! widths ([`dtype`]), exact integer arithmetic ([`arith`]), Python's rounded true division
//! ([`truediv`]), the
//! hash-consed graph ([`graph`]) and the range transfer functions
//! ([`ranges`]) the graph runs on every node it builds. Nothing here
//! imports a module outside `ir`.

pub mod arith;
pub mod dtype;
pub mod graph;
pub mod op;
pub mod ranges;
pub mod truediv;

pub use dtype::DType;
pub use graph::{Graph, Key, Node, NodeId, TypeError, VarDecl};
pub use op::Op;

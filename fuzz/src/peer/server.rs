//! The other side of the protocol: any [`Subject`] (tileproof's own engine)
//! served on standard input and output (`tileproof serve`), as an adapter
//! of the protocol's Rust SDK: its loop reads the requests and writes the
//! answers, exactly as for a peer written in Rust.

use super::codec::{from_tree, tree, Malformed};
use crate::subject::{Answer, Integers, Subject};
use engine::dtype::DType;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::Partial;
use std::io::{self, BufRead, Write};
use tileproof_adapter::{
    self as wire, Adapter, Case, Hello, InputLanguage, Refuse, Simplified, VarDtype,
};

/// Serves `subject` over the protocol: writes its hello to `output`, then
/// answers every request line of `input` until it ends. `tileproof serve`
/// runs tileproof's engine this way, so that it (or a deliberately broken
/// rule set) can be tested exactly as a peer is. A request that cannot be
/// read gets an `error` answer; the loop goes on.
pub fn serve(
    subject: &dyn Subject,
    version: &str,
    input: impl BufRead,
    output: impl Write,
) -> io::Result<()> {
    let served = Served {
        subject,
        version: version.to_string(),
    };
    tileproof_adapter::serve_on(served, input, output)
}

/// A subject as an adapter.
struct Served<'s> {
    subject: &'s dyn Subject,
    version: String,
}

impl Adapter for Served<'_> {
    fn hello(&self) -> Hello {
        let prof = self.subject.profile();
        let profile = wire::Profile {
            ops: prof
                .ops
                .iter()
                .filter(|op| **op != Op::Cast)
                .map(|op| op.name().to_string())
                .collect(),
            invalid: prof.invalid,
            integers: match prof.integers {
                Integers::Unbounded => wire::Integers::Unbounded,
                Integers::Fixed(w) if w.0 == 32 => wire::Integers::Int32,
                Integers::Fixed(w) if w.0 == 64 => wire::Integers::Int64,
                Integers::Fixed(w) => wire::Integers::Other(format!("int{}", w.0)),
            },
            bool_vars: prof.bool_vars,
            partial_ops: match prof.partial {
                Partial::Undefined => wire::PartialOps::Undefined,
                Partial::Unspecified => wire::PartialOps::Unspecified,
            },
            input_language: InputLanguage {
                invalid_compared: prof.invalid_compared,
                affine: prof.affine,
                positive_divisors: prof.positive_divisors,
                defined_everywhere: prof.defined_everywhere,
            },
        };
        Hello::new("tileproof", self.version.clone(), profile)
    }

    fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse> {
        let (mut g, roots) = graph_of(case).map_err(|e| Refuse::Error(e.to_string()))?;
        match self.subject.simplify(&mut g, &roots) {
            Ok(Answer::Simplified { roots: out, .. }) => Ok(Simplified::trees(
                out.iter().map(|&r| tree(&g, r)).collect(),
            )),
            Ok(Answer::Unsupported(why)) => Err(Refuse::Unsupported(why)),
            Ok(Answer::Declined(why)) => Err(Refuse::Declined(why)),
            Err(refusal) => Err(Refuse::Error(refusal.to_string())),
        }
    }
}

/// The case's variables declared in a graph, and its trees built there.
fn graph_of(case: &Case) -> Result<(Graph, Vec<NodeId>), Malformed> {
    let mut g = Graph::new();
    for v in &case.vars {
        let dt = match &v.dtype {
            VarDtype::Index => DType::Index,
            VarDtype::Bool => DType::Bool,
            VarDtype::Other(d) => {
                return Err(Malformed::VarDtype {
                    name: v.name.clone(),
                    dtype: d.clone(),
                })
            }
        };
        g.declare_var(&v.name, dt, v.lo, v.hi)?;
    }
    let roots = case
        .trees
        .iter()
        .map(|t| from_tree(&mut g, t))
        .collect::<Result<_, _>>()?;
    Ok((g, roots))
}

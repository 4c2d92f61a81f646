//! Composition of indexing maps, as XLA composes a fusion's maps
//! (`ComposeIndexingMaps`): in a chain, each map's results are the next
//! map's dimensions, so the composed map takes the first map's dimensions
//! to the last map's results.
//!
//! A point is in the composed domain when it is in the first map's domain,
//! the first map's results there are within the second map's dimension
//! bounds and meet its constraints (with its own range and runtime
//! variables), and so on down the chain: the bounds of a later map's
//! dimensions become constraints on the earlier results. The range and
//! runtime variables of every map stay free variables of the composed map,
//! the last map's first, as XLA orders them.
//!
//! [`check`] evaluates the chain map by map, independently of how
//! [`compose`] built the composed graph, and compares.

use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op, TypeError};
use crate::meaning::domain::{gate, split, Constraint, GateError, Split, SplitError};
use crate::meaning::interp::{eval, Val};
use crate::text::parse::Program;
use crate::text::print::count;
use crate::text::xla::XlaMap;

/// Why maps cannot be composed (maps numbered from 1, in the chain's
/// order).
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    #[error("nothing to compose: no map")]
    NoMap,
    #[error("map {} has {}, but map {index} has {}", index + 1, count(*dims, "dimension"), count(*results, "result"))]
    Arity {
        index: usize,
        dims: usize,
        results: usize,
    },
    #[error("map {}: {err}", map + 1)]
    NotOneDomain { map: usize, err: SplitError },
    #[error(transparent)]
    Type(#[from] TypeError),
    #[error(transparent)]
    Gate(#[from] GateError),
}

/// A composed map and where each map's range and runtime variables went.
pub struct Composed {
    pub map: XlaMap,
    /// Per map of the chain, per variable of its graph: the composed
    /// variable it became (`None` for a later map's dimensions: they are
    /// the previous map's results).
    pub vars: Vec<Vec<Option<u32>>>,
}

/// A map's results and constraints, read back from its gated roots;
/// `None` for a map whose domain is empty.
type Parts = Option<(Graph, Vec<Constraint>, Vec<NodeId>)>;

fn parts(m: &XlaMap, index: usize) -> Result<Parts, ComposeError> {
    let mut g = m.program.graph.clone();
    match split(&mut g, &m.program.outputs, &m.program.constraints) {
        Ok(Split::Map {
            constraints,
            results,
        }) => Ok(Some((g, constraints, results))),
        Ok(Split::Empty) => Ok(None),
        Err(err) => Err(ComposeError::NotOneDomain { map: index, err }),
    }
}

/// A fresh name `prefix{k}` not among `taken`, counting up from `*next`.
fn fresh(prefix: &str, next: &mut usize, taken: &[String]) -> String {
    loop {
        let name = format!("{prefix}{next}");
        *next += 1;
        if !taken.contains(&name) {
            return name;
        }
    }
}

/// Composes `maps`, each map's results feeding the next map's dimensions.
/// The result is not simplified. A chain with an empty map is empty
/// (XLA's `KnownEmpty_Composition`): the first map's dimensions, the last
/// map's number of results, each `invalid`.
pub fn compose(maps: &[XlaMap]) -> Result<Composed, ComposeError> {
    let first = maps.first().ok_or(ComposeError::NoMap)?;
    for (i, pair) in maps.windows(2).enumerate() {
        if pair[1].dims.len() != pair[0].program.outputs.len() {
            return Err(ComposeError::Arity {
                index: i + 1,
                dims: pair[1].dims.len(),
                results: pair[0].program.outputs.len(),
            });
        }
    }
    let mut g = Graph::new();
    let mut vars: Vec<Vec<Option<u32>>> = maps
        .iter()
        .map(|m| vec![None; m.program.graph.vars().len()])
        .collect();
    for name in &first.dims {
        let v = first
            .program
            .graph
            .var_named(name)
            .expect("a map declares its dims");
        let d = first.program.graph.var(v);
        vars[0][v as usize] = Some(g.declare_var(name, d.dtype, d.lo, d.hi)?);
    }
    // Range variables, then runtime ones, each the last map's first.
    let (mut syms, mut rts) = (Vec::new(), Vec::new());
    let (mut next_s, mut next_rt) = (0, 0);
    for kind in [false, true] {
        for (i, m) in maps.iter().enumerate().rev() {
            for name in if kind { &m.rts } else { &m.syms } {
                let v = m
                    .program
                    .graph
                    .var_named(name)
                    .expect("a map declares its variables");
                let d = m.program.graph.var(v);
                let new = if kind {
                    fresh("rt", &mut next_rt, &first.dims)
                } else {
                    fresh("s", &mut next_s, &first.dims)
                };
                vars[i][v as usize] = Some(g.declare_var(&new, d.dtype, d.lo, d.hi)?);
                if kind { &mut rts } else { &mut syms }.push(new);
            }
        }
    }
    let mut split_maps = Vec::with_capacity(maps.len());
    for (i, m) in maps.iter().enumerate() {
        split_maps.push(parts(m, i)?);
    }
    if split_maps.iter().any(Option::is_none) {
        let inv = g.invalid();
        let last = maps.last().expect("a first map").program.outputs.len();
        return Ok(Composed {
            map: XlaMap {
                program: Program::of_results(g, vec![inv; last], Vec::new()),
                dims: first.dims.clone(),
                syms,
                rts,
            },
            vars,
        });
    }
    let mut constraints: Vec<Constraint> = Vec::new();
    let mut inputs: Vec<NodeId> = Vec::new();
    for (i, (m, p)) in maps.iter().zip(split_maps).enumerate() {
        let (mg, cs, results) = p.expect("no map is empty");
        let dim_of = |v: u32| m.dims.iter().position(|d| mg.var_named(d) == Some(v));
        if i > 0 {
            // This map's dimension bounds, on the results that feed them.
            for (k, &x) in inputs.iter().enumerate() {
                let d = mg.var(mg.var_named(&m.dims[k]).expect("declared"));
                constraints.push(Constraint {
                    expr: x,
                    lo: d.lo,
                    hi: d.hi,
                });
            }
        }
        let mut roots: Vec<NodeId> = cs.iter().map(|c| c.expr).collect();
        roots.extend(&results);
        let fed = inputs.clone();
        let mine = vars[i].clone();
        let copied = g.substitute(&mg, &roots, |g, v| {
            Ok(
                match (i, dim_of(v), mine.get(v as usize).copied().flatten()) {
                    (0, _, Some(nv)) | (_, None, Some(nv)) => g.var_node(nv),
                    (_, Some(k), _) if i > 0 => fed[k],
                    _ => {
                        return Err(TypeError(format!(
                            "`{}` is not a variable of map {i}",
                            mg.var(v).name
                        )))
                    }
                },
            )
        })?;
        for (c, &e) in cs.iter().zip(&copied) {
            constraints.push(Constraint { expr: e, ..*c });
        }
        inputs = copied[cs.len()..].to_vec();
    }
    let outputs = gate(&mut g, &constraints, &inputs)?;
    Ok(Composed {
        map: XlaMap {
            program: Program::of_results(g, outputs, constraints),
            dims: first.dims.clone(),
            syms,
            rts,
        },
        vars,
    })
}

/// How a composition was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    pub points: u64,
    /// Every point of the composed variables' box (else a sample).
    pub exhaustive: bool,
}

/// A point where the composed map is not the chain applied map by map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The composed map's variables, by name, and their values.
    pub point: Vec<(String, i128)>,
    /// The chain's results there (`None`: outside its domain).
    pub chain: Option<Vec<i128>>,
    /// The composed map's results there (`None`: outside its domain).
    pub composed: Option<Vec<i128>>,
}

/// Applies the chain map by map at a point of the composed variables: the
/// last map's results, or `None` where a map's domain (its box or its
/// constraints) leaves the point out.
fn apply_chain(c: &Composed, maps: &[XlaMap], env: &[i128], w: Width) -> Option<Vec<i128>> {
    let mut dims: Vec<i128> = maps[0]
        .dims
        .iter()
        .map(|d| env[c.map.program.graph.var_named(d).expect("declared") as usize])
        .collect();
    for (i, m) in maps.iter().enumerate() {
        let mg = &m.program.graph;
        let mut menv = vec![0i128; mg.vars().len()];
        for (k, name) in m.dims.iter().enumerate() {
            let v = mg.var_named(name).expect("declared");
            let d = mg.var(v);
            if dims[k] < d.lo as i128 || dims[k] > d.hi as i128 {
                return None;
            }
            menv[v as usize] = dims[k];
        }
        for (v, nv) in c.vars[i].iter().enumerate() {
            if let Some(nv) = nv {
                menv[v] = env[*nv as usize];
            }
        }
        dims = ints(eval(mg, &m.program.outputs, &menv, w).ok()?)?;
    }
    Some(dims)
}

/// Integer results, or `None` for a masked lane (outside the domain).
fn ints(vals: Vec<Val>) -> Option<Vec<i128>> {
    vals.into_iter()
        .map(|v| match v {
            Val::Int(x) => Some(x),
            _ => None,
        })
        .collect()
}

/// Checks that `roots` (the composed map's results, or a simplification of
/// them in its graph) are the chain applied map by map: at every point of
/// the composed box when it has at most `limit` points, else at `limit`
/// points drawn by a fixed generator and the box's corners.
pub fn check(
    c: &Composed,
    maps: &[XlaMap],
    g: &Graph,
    roots: &[NodeId],
    w: Width,
    limit: u64,
) -> Result<Checked, Box<Mismatch>> {
    let box_: Vec<(i128, i128)> = g
        .vars()
        .iter()
        .map(|d| (d.lo as i128, d.hi as i128))
        .collect();
    let size = box_.iter().try_fold(1u64, |acc, (lo, hi)| {
        acc.checked_mul(u64::try_from(hi - lo + 1).ok()?)
    });
    let exhaustive = size.is_some_and(|s| s <= limit);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    // Deterministic, so a failure reproduces.
    let mut draw = |lo: i128, hi: i128| {
        let z = crate::splitmix::splitmix64(&mut state);
        lo + (z as u128 % ((hi - lo + 1) as u128)) as i128
    };
    let points: Box<dyn Iterator<Item = Vec<i128>>> = if exhaustive {
        Box::new(crate::meaning::interp::points(g))
    } else {
        let corners = (0..1u64 << box_.len().min(10)).map(|bits| {
            box_.iter()
                .enumerate()
                .map(|(k, (lo, hi))| if bits >> k.min(63) & 1 == 1 { *hi } else { *lo })
                .collect::<Vec<i128>>()
        });
        let drawn: Vec<Vec<i128>> = (0..limit)
            .map(|_| box_.iter().map(|&(lo, hi)| draw(lo, hi)).collect())
            .collect();
        Box::new(corners.chain(drawn))
    };
    let mut n = 0u64;
    for env in points {
        n += 1;
        let chain = apply_chain(c, maps, &env, w);
        let composed = eval(g, roots, &env, w).ok().and_then(ints);
        if chain != composed {
            return Err(Box::new(Mismatch {
                point: g.vars().iter().map(|d| d.name.clone()).zip(env).collect(),
                chain,
                composed,
            }));
        }
    }
    Ok(Checked {
        points: n,
        exhaustive,
    })
}

/// Whether every result is its own dimension: `(d0, ..., dn) -> (d0, ...,
/// dn)` on the whole box (a dimension with one point may read as that
/// constant), the identity a cancelling reshape pair composes to.
pub fn is_identity(g: &Graph, dims: &[String], roots: &[NodeId]) -> bool {
    roots.len() == dims.len()
        && roots.iter().zip(dims).all(|(&r, d)| {
            let Some(v) = g.var_named(d) else {
                return false;
            };
            let n = g.node(r);
            let var = g.var(v);
            n.dtype == DType::Index
                && (n.op == Op::Var(v) || (var.lo == var.hi && n.as_const() == Some(var.lo)))
        })
}

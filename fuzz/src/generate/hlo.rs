//! The fused-HLO generator: XLA's indexing maps of a chain of HLO ops,
//! composed into one map per path to the parameter, as XLA's indexing
//! analysis builds a fusion's maps.
//!
//! A case starts from a parameter's shape and applies up to
//! [`MAX_HLO_OPS`] ops of XLA's indexing documentation, each with the map
//! that documentation gives it: elementwise, broadcast, transpose, reverse,
//! slice with strides, pad with low, high and interior padding (negative
//! low and high too), concatenate, reshape (and so bitcast, a
//! transpose-reshape-transpose), reduce, reduce-window and dot (range
//! variables), dynamic slice and gather (runtime variables). In the
//! output-to-input direction the maps compose from the root down; in the
//! input-to-output direction (the inverse maps: where a strided slice's and
//! an interior pad's constraints come from) from the parameter up, with
//! the ops that have such a map. Sometimes a second path reaches the same
//! parameter through a detour that returns to the same shape (a transpose
//! and its inverse, a reshape and back, a double reverse), as in the
//! documentation's deduplicated fusion: the case has both maps' results.
//! Maps are built in XLA's syntax and composed by [`engine::compose`];
//! shapes stay small so that most domains are walked exhaustively.

use super::Case;
use arbitrary::{Arbitrary, Unstructured};
use engine::compose::compose;
use engine::op::Family;
use engine::xla::{parse_map, XlaMap};

/// Most ops of a chain.
pub const MAX_HLO_OPS: usize = 5;
/// Largest rank, dimension and element count of a shape along the chain.
pub const MAX_HLO_RANK: usize = 4;
pub const MAX_HLO_DIM: i64 = 64;
pub const MAX_HLO_ELEMENTS: i64 = 4096;

/// One op: its kind and raw parameters, read modulo what the shape allows.
#[derive(Clone, Debug, PartialEq, Eq, Arbitrary)]
pub struct HloStep {
    pub kind: u8,
    pub a: u8,
    pub b: u8,
    pub c: u8,
}

/// A chain of ops from a parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HloGenome {
    /// Input-to-output maps (else output-to-input).
    pub input_to_output: bool,
    /// The parameter's shape (each dimension taken into 1..=12).
    pub shape: Vec<u8>,
    pub steps: Vec<HloStep>,
    /// 0 no second path; else the detour's kind and parameter.
    pub detour: u8,
}

impl<'a> Arbitrary<'a> for HloGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<HloGenome> {
        let input_to_output = bool::arbitrary(u)?;
        let rank = u.int_in_range(1..=3usize)?;
        let shape = (0..rank)
            .map(|_| u.int_in_range(1..=12u8))
            .collect::<arbitrary::Result<_>>()?;
        let n = u.int_in_range(1..=MAX_HLO_OPS)?;
        let steps = (0..n)
            .map(|_| HloStep::arbitrary(u))
            .collect::<arbitrary::Result<_>>()?;
        let detour = if u.ratio(1, 3)? {
            u.int_in_range(1..=255u8)?
        } else {
            0
        };
        Ok(HloGenome {
            input_to_output,
            shape,
            steps,
            detour,
        })
    }
}

/// An op's map in XLA's syntax: its domain's dimensions (bounds), range
/// and runtime variables, results and constraints.
struct MapText {
    dims: Vec<(i64, i64)>,
    syms: Vec<(i64, i64)>,
    rts: Vec<(i64, i64)>,
    results: Vec<String>,
    constraints: Vec<String>,
}

impl MapText {
    /// The identity-shaped start: `dims` of `shape`, no result yet.
    fn over(shape: &[i64]) -> MapText {
        MapText {
            dims: shape.iter().map(|&n| (0, n - 1)).collect(),
            syms: Vec::new(),
            rts: Vec::new(),
            results: Vec::new(),
            constraints: Vec::new(),
        }
    }

    fn text(&self) -> String {
        let names = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
        let (d, s, rt) = (
            names("d", self.dims.len()),
            names("s", self.syms.len()),
            names("rt", self.rts.len()),
        );
        let mut t = format!("({})", d.join(", "));
        if !s.is_empty() {
            t += &format!("[{}]", s.join(", "));
        }
        if !rt.is_empty() {
            t += &format!("{{{}}}", rt.join(", "));
        }
        t += &format!(" -> ({})\ndomain:\n", self.results.join(", "));
        let bounds = d.iter().zip(&self.dims).chain(s.iter().zip(&self.syms));
        for (name, (lo, hi)) in bounds.chain(rt.iter().zip(&self.rts)) {
            t += &format!("{name} in [{lo}, {hi}]\n");
        }
        for c in &self.constraints {
            t += &format!("{c}\n");
        }
        t
    }
}

/// One op applied: its name for the description, the shape it produces,
/// and its map in the case's direction.
struct Applied {
    name: String,
    out: Vec<i64>,
    map: MapText,
}

/// A permutation of `0..n` numbered `k` (mod n!), by the factorial system.
fn permutation(n: usize, mut k: usize) -> Vec<usize> {
    let mut left: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(n);
    for i in (1..=n).rev() {
        out.push(left.remove(k % i));
        k /= i;
    }
    out
}

/// `x * mul + add`, as XLA prints it (no `* 1`, no `+ 0`).
fn affine(x: &str, mul: i64, add: i64) -> String {
    let scaled = if mul == 1 {
        x.to_string()
    } else {
        format!("{x} * {mul}")
    };
    match add {
        0 => scaled,
        a if a < 0 => format!("{scaled} - {}", -a),
        a => format!("{scaled} + {a}"),
    }
}

/// Row-major strides of a shape.
fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1; shape.len()];
    for j in (0..shape.len().saturating_sub(1)).rev() {
        s[j] = s[j + 1] * shape[j + 1];
    }
    s
}

/// `shape`'s element count written as another shape of rank 1..=3, chosen
/// by `k`: its dimensions are divisors taken in turn.
fn refactor(count: i64, k: u8) -> Vec<i64> {
    let rank = 1 + (k % 3) as usize;
    let mut left = count;
    let mut out = Vec::new();
    for i in 0..rank - 1 {
        let divisors: Vec<i64> = (1..=left.min(MAX_HLO_DIM))
            .filter(|d| left % d == 0)
            .collect();
        let d = divisors[(k as usize / 3 + i) % divisors.len()];
        out.push(d);
        left /= d;
    }
    out.push(left);
    out
}

/// The map of a reshape from `from` to `to` (output to input: the
/// position in `to`'s row-major order read back in `from`'s shape).
fn reshape_map(from: &[i64], to: &[i64]) -> MapText {
    let mut m = MapText::over(to);
    let terms: Vec<String> = strides(to)
        .iter()
        .enumerate()
        .filter(|&(i, _)| to[i] > 1)
        .map(|(i, &s)| affine(&format!("d{i}"), s, 0))
        .collect();
    let linear = match terms.len() {
        0 => "0".to_string(),
        1 => terms[0].clone(),
        _ => format!("({})", terms.join(" + ")),
    };
    for (j, &s) in strides(from).iter().enumerate() {
        let q = if s == 1 {
            linear.clone()
        } else {
            format!("{linear} floordiv {s}")
        };
        m.results.push(if j == 0 {
            q
        } else if s == 1 {
            format!("{q} mod {}", from[j])
        } else {
            format!("({q}) mod {}", from[j])
        });
    }
    m
}

/// Applies step `st` to a value of shape `inp`, or `None` when the shape
/// does not allow it (or the direction has no such map).
fn apply(st: &HloStep, inp: &[i64], i2o: bool) -> Option<Applied> {
    let r = inp.len();
    let (a, b, c) = (st.a as i64, st.b as i64, st.c as i64);
    let d = |j: usize| format!("d{j}");
    let same = |name: &str, results: Vec<String>| Applied {
        name: name.to_string(),
        out: inp.to_vec(),
        map: MapText {
            results,
            ..MapText::over(inp)
        },
    };
    // The input-to-output direction has the first nine kinds only.
    let kind = st.kind % if i2o { 9 } else { 13 };
    Some(match kind {
        0 => same("elementwise", (0..r).map(d).collect()),
        1 => broadcast(inp, a, b, i2o)?,
        2 => {
            let perm = permutation(r, a as usize + 256 * b as usize);
            let out: Vec<i64> = perm.iter().map(|&j| inp[j]).collect();
            let mut m = MapText::over(if i2o { inp } else { &out });
            m.results = if i2o {
                // Output position i holds input dimension perm[i].
                perm.iter().map(|&j| d(j)).collect()
            } else {
                (0..r)
                    .map(|j| d(perm.iter().position(|&p| p == j).expect("a permutation")))
                    .collect()
            };
            Applied {
                name: format!("transpose{perm:?}"),
                out,
                map: m,
            }
        }
        3 => {
            let rev = |j: usize| (a >> j) & 1 == 1;
            let res = (0..r)
                .map(|j| {
                    if rev(j) {
                        format!("{} - d{j}", inp[j] - 1)
                    } else {
                        d(j)
                    }
                })
                .collect();
            Applied {
                name: format!("reverse(mask {})", a % 16),
                ..same("", res)
            }
        }
        4 => slice(inp, a, b, i2o),
        5 => pad(inp, a, b, c, i2o),
        6 => {
            // concatenate along `k`: `before` elements of other operands
            // first, `after` after.
            let (k, before, after) = ((a as usize) % r, b % 6, c % 6);
            let mut out = inp.to_vec();
            out[k] += before + after;
            if out[k] > MAX_HLO_DIM {
                return None;
            }
            let mut m = MapText::over(if i2o { inp } else { &out });
            m.results = (0..r).map(d).collect();
            if i2o {
                m.results[k] = affine(&format!("d{k}"), 1, before);
            } else {
                m.dims[k] = (before, before + inp[k] - 1);
                m.results[k] = affine(&format!("d{k}"), 1, -before);
            }
            Applied {
                name: format!("concatenate(dim {k}, at {before} of {})", out[k]),
                out,
                map: m,
            }
        }
        7 => {
            let out = refactor(inp.iter().product(), st.a);
            let map = if i2o {
                reshape_map(&out, inp)
            } else {
                reshape_map(inp, &out)
            };
            Applied {
                name: format!("reshape{out:?}"),
                out,
                map,
            }
        }
        8 => reduce(inp, a, i2o)?,
        9 if !i2o => {
            // reduce-window along `k`: window `w`, stride `s`, no padding
            // (XLA composes a padded one with a pad).
            let k = (a as usize) % r;
            let (w, s) = (1 + b % inp[k].min(4), 1 + c % 3);
            let mut out = inp.to_vec();
            out[k] = (inp[k] - w) / s + 1;
            let mut m = MapText::over(&out);
            m.syms.push((0, w - 1));
            m.results = (0..r).map(d).collect();
            m.results[k] = format!("{} + s0", affine(&format!("d{k}"), s, 0));
            Applied {
                name: format!("reduce-window(dim {k}, size {w}, stride {s})"),
                out,
                map: m,
            }
        }
        10 if !i2o => {
            // dot contracting the last dimension with a [K, n] operand.
            let n = 1 + a % 6;
            let mut out = inp.to_vec();
            out[r - 1] = n;
            let mut m = MapText::over(&out);
            m.syms.push((0, inp[r - 1] - 1));
            m.results = (0..r - 1).map(d).chain(["s0".to_string()]).collect();
            Applied {
                name: format!("dot(contract {}, n {n})", inp[r - 1]),
                out,
                map: m,
            }
        }
        k @ (11 | 12) if !i2o => dynamic_slice(inp, a, b, k == 12)?,
        _ => return None,
    })
}

/// A broadcast: a new dimension of `1 + b % 6` at `a % (rank + 1)`.
fn broadcast(inp: &[i64], a: i64, b: i64, i2o: bool) -> Option<Applied> {
    let r = inp.len();
    let d = |j: usize| format!("d{j}");
    let (p, n) = ((a as usize) % (r + 1), 1 + b % 6);
    if r == MAX_HLO_RANK {
        return None;
    }
    let mut out = inp.to_vec();
    out.insert(p, n);
    let mut m = MapText::over(if i2o { inp } else { &out });
    if i2o {
        m.syms.push((0, n - 1));
        m.results = (0..r).map(d).collect();
        m.results.insert(p, "s0".into());
    } else {
        m.results = (0..=r).filter(|&j| j != p).map(d).collect();
    }
    Some(Applied {
        name: format!("broadcast(+{n} at {p})"),
        out,
        map: m,
    })
}

/// A reduce of the dimensions of mask `a`, keeping at least one.
fn reduce(inp: &[i64], a: i64, i2o: bool) -> Option<Applied> {
    let r = inp.len();
    let d = |j: usize| format!("d{j}");
    let reduced: Vec<usize> = (0..r).filter(|&j| (a >> j) & 1 == 1).collect();
    if reduced.is_empty() || reduced.len() == r {
        return None;
    }
    let out: Vec<i64> = (0..r)
        .filter(|j| !reduced.contains(j))
        .map(|j| inp[j])
        .collect();
    let mut m = MapText::over(if i2o { inp } else { &out });
    if i2o {
        m.results = (0..r).filter(|j| !reduced.contains(j)).map(d).collect();
    } else {
        let mut kept = 0;
        for (j, &n) in inp.iter().enumerate() {
            if reduced.contains(&j) {
                m.results.push(format!("s{}", m.syms.len()));
                m.syms.push((0, n - 1));
            } else {
                m.results.push(d(kept));
                kept += 1;
            }
        }
    }
    Some(Applied {
        name: format!("reduce{reduced:?}"),
        out,
        map: m,
    })
}

/// A dynamic slice (or, with `gather`, a batch of such slices): the
/// offsets are runtime values, clamped into the operand by XLA.
fn dynamic_slice(inp: &[i64], a: i64, b: i64, gather: bool) -> Option<Applied> {
    let r = inp.len();
    let d = |j: usize| format!("d{j}");
    let sizes: Vec<i64> = (0..r).map(|j| 1 + (a + 5 * j as i64) % inp[j]).collect();
    let batch = gather.then_some(1 + b % 4);
    let out: Vec<i64> = batch.into_iter().chain(sizes.iter().copied()).collect();
    if out.len() > MAX_HLO_RANK {
        return None;
    }
    let shift = usize::from(batch.is_some());
    let mut m = MapText::over(&out);
    for j in 0..r {
        if sizes[j] < inp[j] {
            m.results
                .push(format!("d{} + rt{}", j + shift, m.rts.len()));
            m.rts.push((0, inp[j] - sizes[j]));
        } else {
            m.results.push(d(j + shift));
        }
    }
    let what = if gather { "gather" } else { "dynamic-slice" };
    Some(Applied {
        name: format!("{what}{sizes:?}"),
        out,
        map: m,
    })
}

/// A strided slice: from `start`, every `stride`-th element to the end.
fn slice(inp: &[i64], a: i64, b: i64, i2o: bool) -> Applied {
    let r = inp.len();
    let start: Vec<i64> = (0..r).map(|j| (a + 3 * j as i64) % inp[j]).collect();
    let stride: Vec<i64> = (0..r).map(|j| 1 + (b >> (2 * j)) % 3).collect();
    let out: Vec<i64> = (0..r)
        .map(|j| (inp[j] - start[j] + stride[j] - 1) / stride[j])
        .collect();
    let mut m = MapText::over(if i2o { inp } else { &out });
    for j in 0..r {
        let (s, t) = (start[j], stride[j]);
        if i2o {
            m.dims[j] = (s, s + (out[j] - 1) * t);
            let shifted = if s == 0 {
                format!("d{j}")
            } else {
                format!("(d{j} - {s})")
            };
            if t == 1 {
                m.results.push(affine(&format!("d{j}"), 1, -s));
            } else {
                m.results.push(format!("{shifted} floordiv {t}"));
                m.constraints.push(format!("{shifted} mod {t} in [0, 0]"));
            }
        } else {
            m.results.push(affine(&format!("d{j}"), t, s));
        }
    }
    Applied {
        name: format!("slice(start {start:?}, stride {stride:?})"),
        out,
        map: m,
    }
}

/// A pad: `lo` and `hi` in -2..=3 (cutting when negative), interior 0..=2.
fn pad(inp: &[i64], a: i64, b: i64, c: i64, i2o: bool) -> Applied {
    let r = inp.len();
    let mut cfg: Vec<(i64, i64, i64)> = (0..r)
        .map(|j| {
            let j = j as i64;
            ((a >> j) % 6 - 2, (b >> j) % 6 - 2, (c >> j) % 3)
        })
        .collect();
    let size = |n: i64, (lo, hi, int): (i64, i64, i64)| lo + hi + n + (n - 1) * int;
    for (j, p) in cfg.iter_mut().enumerate() {
        let n = inp[j];
        // Some input element must land inside the output.
        let inside = (0..n).any(|k| (0..size(n, *p)).contains(&(p.0 + k * (p.2 + 1))));
        if !inside || size(n, *p) > MAX_HLO_DIM {
            *p = (0, 0, 0);
        }
    }
    let out: Vec<i64> = (0..r).map(|j| size(inp[j], cfg[j])).collect();
    let mut m = MapText::over(if i2o { inp } else { &out });
    for (j, &(lo, _, int)) in cfg.iter().enumerate() {
        let step = int + 1;
        if i2o {
            let e = affine(&format!("d{j}"), step, lo);
            // Negative padding cuts input elements off: a bound of the
            // dimension itself when it maps to itself.
            if (lo, step) == (0, 1) {
                m.dims[j].1 = m.dims[j].1.min(out[j] - 1);
            } else if lo < 0 || lo + (inp[j] - 1) * step > out[j] - 1 {
                m.constraints.push(format!("{e} in [0, {}]", out[j] - 1));
            }
            m.results.push(e);
        } else {
            m.dims[j] = (lo.max(0), (lo + (inp[j] - 1) * step).min(out[j] - 1));
            let shifted = if lo == 0 {
                format!("d{j}")
            } else {
                format!("(d{j} - {lo})")
            };
            if step == 1 {
                m.results.push(affine(&format!("d{j}"), 1, -lo));
            } else {
                m.results.push(format!("{shifted} floordiv {step}"));
                m.constraints
                    .push(format!("{shifted} mod {step} in [0, 0]"));
            }
        }
    }
    Applied {
        name: format!("pad{cfg:?}"),
        out,
        map: m,
    }
}

/// The ops of a detour that comes back to `shape`: a transpose and its
/// inverse, a reshape and back, or a reverse twice.
fn detour(shape: &[i64], k: u8) -> Vec<Applied> {
    let r = shape.len();
    let step = |kind: u8, n: usize| HloStep {
        kind,
        a: (n % 256) as u8,
        b: (n / 256) as u8,
        c: 0,
    };
    let twice = |first: HloStep, second: HloStep| {
        let x = apply(&first, shape, false).expect("applies to any shape");
        let y = apply(&second, &x.out, false).expect("applies to any shape");
        vec![x, y]
    };
    match k % 3 {
        0 if r > 1 => {
            let count: usize = (1..=r).product();
            let p = 1 + (k as usize / 3) % (count - 1);
            let perm = permutation(r, p);
            let inv: Vec<usize> = (0..r)
                .map(|j| perm.iter().position(|&x| x == j).expect("a permutation"))
                .collect();
            let back = (0..count)
                .find(|&n| permutation(r, n) == inv)
                .expect("every permutation has a number");
            twice(step(2, p), step(2, back))
        }
        1 => {
            let other = refactor(shape.iter().product(), k / 3);
            vec![
                Applied {
                    name: format!("reshape{other:?}"),
                    out: other.clone(),
                    map: reshape_map(shape, &other),
                },
                Applied {
                    name: format!("reshape{shape:?}"),
                    out: shape.to_vec(),
                    map: reshape_map(&other, shape),
                },
            ]
        }
        _ => twice(step(3, k as usize / 3), step(3, k as usize / 3)),
    }
}

/// The ops of `steps` that apply, in order, from a parameter of `shape`.
fn chain(shape: &[i64], steps: &[HloStep], i2o: bool) -> Vec<Applied> {
    let mut cur = shape.to_vec();
    let mut out = Vec::new();
    for st in steps {
        let Some(x) = apply(st, &cur, i2o) else {
            continue;
        };
        let count: i64 = x.out.iter().product();
        if x.out.iter().any(|n| !(1..=MAX_HLO_DIM).contains(n)) || count > MAX_HLO_ELEMENTS {
            continue;
        }
        cur = x.out.clone();
        out.push(x);
    }
    out
}

/// Parses and composes the maps of `ops` in the direction's order.
fn composed(shape: &[i64], ops: &[&Applied], i2o: bool) -> Option<XlaMap> {
    let mut maps: Vec<XlaMap> = Vec::new();
    if ops.is_empty() {
        let id = MapText {
            results: (0..shape.len()).map(|j| format!("d{j}")).collect(),
            ..MapText::over(shape)
        };
        return Some(parse_map(&id.text()).expect("the identity map is well formed"));
    }
    let ordered: Vec<&&Applied> = if i2o {
        ops.iter().collect()
    } else {
        ops.iter().rev().collect()
    };
    for x in ordered {
        maps.push(parse_map(&x.map.text()).ok()?);
    }
    compose(&maps).ok().map(|c| c.map)
}

impl HloGenome {
    /// The parameter's shape, clamped.
    fn shape(&self) -> Vec<i64> {
        let s: Vec<i64> = self
            .shape
            .iter()
            .take(3)
            .map(|&n| 1 + (n as i64 - 1).rem_euclid(12))
            .collect();
        if s.is_empty() {
            vec![4]
        } else {
            s
        }
    }

    /// Builds the case. Total: ops the shape does not allow are skipped,
    /// and a chain whose maps do not compose loses ops from its root end.
    pub fn build(&self) -> Case {
        let shape = self.shape();
        let i2o = self.input_to_output;
        let mut ops = chain(&shape, &self.steps, i2o);
        let mut extra: Vec<Applied> = Vec::new();
        if self.detour != 0 && !i2o {
            let end = ops.last().map_or(shape.clone(), |x| x.out.clone());
            extra = detour(&end, self.detour);
        }
        loop {
            let direct: Vec<&Applied> = ops.iter().collect();
            let Some(map) = composed(&shape, &direct, i2o) else {
                // The identity map of no op always composes.
                ops.pop();
                extra.clear();
                continue;
            };
            let mut g = map.program.graph.clone();
            let mut roots = map.program.outputs.clone();
            let mut names: Vec<String> = ops.iter().map(|x| x.name.clone()).collect();
            if !extra.is_empty() {
                let both: Vec<&Applied> = ops.iter().chain(&extra).collect();
                if let Some(m2) = composed(&shape, &both, false) {
                    // Same dimensions and range variables, by name.
                    if let Ok(r2) = g.import(&m2.program.graph, &m2.program.outputs) {
                        roots.extend(r2);
                        names.push(format!(
                            "and through {}",
                            extra
                                .iter()
                                .map(|x| x.name.as_str())
                                .collect::<Vec<_>>()
                                .join(" -> ")
                        ));
                    }
                }
            }
            let description = format!(
                "hlo {}: param{shape:?} -> {}",
                if i2o {
                    "input to output"
                } else {
                    "output to input"
                },
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(" -> ")
                }
            );
            return Case {
                graph: g,
                roots,
                family: Family::Floor,
                description,
            };
        }
    }
}

/// A reshape of a parameter to another shape and back, as an
/// output-to-input map of the pair: the identity, if the simplifier sees
/// that the two reshapes cancel (a power check, not a soundness one).
pub fn reshape_round_trip(seed: u64) -> Case {
    let mut s = crate::rng::seed_bytes(seed, 16);
    let shape = refactor(
        1 + (s[0] as i64 % 8) * (1 + s[1] as i64 % 8) * (1 + s[2] as i64 % 4),
        s[3],
    );
    s[4] = s[4].wrapping_add(1);
    let other = refactor(shape.iter().product(), s[4]);
    let there = reshape_map(&shape, &other);
    let back = reshape_map(&other, &shape);
    let maps = [back, there].map(|m| parse_map(&m.text()).expect("a well-formed map"));
    let m = compose(&maps).expect("the reshapes chain").map;
    Case {
        graph: m.program.graph,
        roots: m.program.outputs,
        family: Family::Floor,
        description: format!("hlo reshape round trip: {shape:?} -> {other:?} -> {shape:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::dtype::Width;
    use engine::interp::{eval, points, Val};

    /// The values of `roots` at every point of `g`'s box.
    fn table(g: &engine::ir::Graph, roots: &[engine::ir::NodeId]) -> Vec<(Vec<i128>, Vec<Val>)> {
        points(g)
            .map(|p| {
                let v = eval(g, roots, &p, Width::W64).expect("maps are defined");
                (p, v)
            })
            .collect()
    }

    #[test]
    fn each_ops_two_maps_are_inverse_on_the_input_to_output_domain() {
        // For every kind with both directions (but broadcast and reduce,
        // which are not one-to-one), the input-to-output map followed by
        // the output-to-input one is the identity exactly where the former
        // is defined.
        let shapes: [&[i64]; 4] = [&[7], &[4, 6], &[3, 5, 2], &[12, 1]];
        let mut checked = 0;
        for kind in [0u8, 2, 3, 4, 5, 6, 7] {
            for shape in shapes {
                for p in 0..24u8 {
                    let st = HloStep {
                        kind,
                        a: p.wrapping_mul(37),
                        b: p.wrapping_mul(11),
                        c: p,
                    };
                    let (Some(fwd), Some(back)) =
                        (apply(&st, shape, true), apply(&st, shape, false))
                    else {
                        continue;
                    };
                    assert_eq!(fwd.out, back.out, "{}", fwd.name);
                    let maps = [&fwd.map, &back.map].map(|m| parse_map(&m.text()).unwrap());
                    let c = compose(&maps).unwrap().map;
                    let alone = table(&maps[0].program.graph, &maps[0].program.outputs);
                    let both = table(&c.program.graph, &c.program.outputs);
                    for ((p, first), (q, round)) in alone.iter().zip(&both) {
                        assert_eq!(p, q);
                        let want: Vec<Val> = if first.iter().all(|v| matches!(v, Val::Int(_))) {
                            p.iter().map(|&x| Val::Int(x)).collect()
                        } else {
                            vec![Val::Invalid; p.len()]
                        };
                        assert_eq!(
                            round,
                            &want,
                            "{} on {shape:?} at {p:?}\n{}",
                            fwd.name,
                            fwd.map.text()
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn output_to_input_maps_stay_inside_the_operand() {
        // Every valid point of an op's output-to-input map reads an element
        // of its operand (an index within the input shape).
        for kind in 0..13u8 {
            for p in 0..40u8 {
                let shape: Vec<i64> = vec![1 + (p as i64 % 5), 2 + (p as i64 % 7)];
                let st = HloStep {
                    kind,
                    a: p.wrapping_mul(29),
                    b: p.wrapping_mul(13),
                    c: p.wrapping_mul(7),
                };
                let Some(x) = apply(&st, &shape, false) else {
                    continue;
                };
                let m = parse_map(&x.map.text())
                    .unwrap_or_else(|e| panic!("{}: {e}\n{}", x.name, x.map.text()));
                let mut valid = 0;
                for (pt, vals) in table(&m.program.graph, &m.program.outputs) {
                    if let [Val::Int(_), ..] = vals[..] {
                        valid += 1;
                        for (j, v) in vals.iter().enumerate() {
                            let Val::Int(i) = *v else {
                                panic!("{}: mixed lanes at {pt:?}", x.name)
                            };
                            assert!(
                                (0..shape[j] as i128).contains(&i),
                                "{} at {pt:?}: {vals:?}",
                                x.name
                            );
                        }
                    }
                }
                assert!(
                    valid > 0,
                    "{}: no point reads the operand\n{}",
                    x.name,
                    x.map.text()
                );
            }
        }
    }

    #[test]
    fn cases_build_for_any_seed_and_their_text_reads_back() {
        let (mut i2o, mut detours, mut symbols, mut runtime) = (0, 0, 0, 0);
        for seed in 0..400 {
            let c = Case::from_seed(crate::generate::Generator::Hlo, seed);
            let p =
                engine::parse::parse_program(&c.to_text()).unwrap_or_else(|e| panic!("{e}\n{c}"));
            assert_eq!(p.outputs.len(), c.roots.len());
            i2o += usize::from(c.description.contains("input to output"));
            detours += usize::from(c.description.contains("and through"));
            let names: Vec<&str> = c.graph.vars().iter().map(|d| d.name.as_str()).collect();
            symbols += usize::from(names.iter().any(|n| n.starts_with('s')));
            runtime += usize::from(names.iter().any(|n| n.starts_with("rt")));
        }
        // Both directions, second paths, range and runtime variables.
        for (what, n) in [
            ("i2o", i2o),
            ("detour", detours),
            ("symbols", symbols),
            ("runtime", runtime),
        ] {
            assert!(n > 20, "{what}: {n} of 400");
        }
    }

    #[test]
    fn a_detour_reaches_the_same_elements_as_the_direct_path() {
        let mut seen = 0;
        for seed in 0..300 {
            let c = Case::from_seed(crate::generate::Generator::Hlo, seed);
            if !c.description.contains("and through") || c.domain_size() > 20_000 {
                continue;
            }
            let half = c.roots.len() / 2;
            for (p, v) in table(&c.graph, &c.roots) {
                assert_eq!(v[..half], v[half..], "{c}\nat {p:?}");
            }
            seen += 1;
        }
        assert!(seen > 10, "{seen}");
    }

    #[test]
    fn a_reshape_round_trip_is_the_identity_at_every_point() {
        for seed in 0..40 {
            let c = reshape_round_trip(seed);
            for (p, v) in table(&c.graph, &c.roots) {
                let want: Vec<Val> = p.iter().map(|&x| Val::Int(x)).collect();
                assert_eq!(v, want, "{c}");
            }
        }
    }
}

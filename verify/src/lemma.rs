//! Lemmas: facts about mathematical integers that rules cite as proof
//! hints (`rule NAME: LHS => RHS if GUARD using LEMMA(ARGS)`).
//!
//! A lemma is a statement over unbounded integers,
//!
//! ```text
//! # truncating division nests, for every sign
//! lemma div_nest(x, a, c): (x / a) / c == x / (a * c) if a != 0 && c != 0
//! ```
//!
//! read "for all integers x, a, c: if the hypothesis holds (and no divisor
//! in it or in the conclusion is zero), the conclusion holds". It is proved
//! once, on its own, by a solver (Z3; then cvc5 where Z3 gives up and cvc5
//! is installed), and only a proved lemma is ever assumed: a rule's query
//! (integer theory) then gets the lemma's instance at the cited arguments
//! (expressions over the rule's pattern variables' values), encoded with the
//! very terms the query uses (`encode`'s division and polynomial
//! arithmetic, the query's own `gcd` symbols), so that the instance talks
//! about the query's terms. An instance of a valid formula is valid, so
//! assuming it cannot make a satisfiable query unsatisfiable: a proof with
//! lemmas is still a proof. A lemma may itself cite lemmas (proved first;
//! cycles are refused).
//!
//! The built-in lemmas live in `verify/lemmas/nonlinear.rules`.

use crate::encode::{int_quotient, int_remainder, Enc, Mode, Num, Term};
use crate::poly::Poly;
use crate::portfolio::SolverKind;
use crate::query::RuleQuery;
use crate::solver::check_within;
use crate::verdict::VerdictKind;
use engine::ir::Op;
use engine::parse::{names, Ast, AstKind, Cursor, ParseError, Span};
use engine::rules::parse::statements;
use engine::rules::LemmaUse;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use z3::ast::{Bool, Int};
use z3::{SatResult, Solver};

/// One lemma as written.
#[derive(Clone, Debug)]
pub struct Lemma {
    pub name: String,
    pub params: Vec<String>,
    pub conclusion: Ast,
    pub hypothesis: Option<Ast>,
    /// Lemmas this one's proof assumes.
    pub uses: Vec<LemmaUse>,
    pub comment: String,
    pub file: String,
    pub line: u32,
    pub text: String,
}

/// How a lemma's proof went.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LemmaResult {
    pub lemma: String,
    /// Proved, failed (a counterexample over the integers), unknown, or
    /// refused (it cites a lemma that is not proved, or no such lemma).
    pub verdict: VerdictKind,
    /// Which solver proved it (`z3`, `cvc5`), or why not.
    pub detail: String,
    pub cached: bool,
    pub seconds: f64,
}

impl LemmaResult {
    pub fn proved(&self) -> bool {
        self.verdict == VerdictKind::Proved
    }
}

/// A set of lemmas, each proved at most once per process (on first use).
/// A lemma cites only lemmas written above it, so proofs never wait in a
/// cycle.
pub struct Lemmas {
    pub lemmas: Vec<Lemma>,
    results: Vec<Mutex<Option<LemmaResult>>>,
    /// The files `(label, text)` it was read from, in order: a worker
    /// process reads the same set from them.
    sources: Vec<(String, String)>,
}

impl std::fmt::Debug for Lemmas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lemmas")
            .field("lemmas", &self.lemmas.len())
            .finish()
    }
}

/// The built-in lemma file.
pub const BUILTIN_FILE: (&str, &str) = (
    "verify/lemmas/nonlinear.rules",
    include_str!("../lemmas/nonlinear.rules"),
);

/// The built-in lemmas, parsed once (shared, so each is proved once per
/// process).
pub fn builtin() -> Arc<Lemmas> {
    static SET: OnceLock<Arc<Lemmas>> = OnceLock::new();
    SET.get_or_init(|| {
        Arc::new(
            Lemmas::parse(BUILTIN_FILE.0, BUILTIN_FILE.1)
                .unwrap_or_else(|e| panic!("built-in lemmas do not parse: {e}")),
        )
    })
    .clone()
}

/// The built-in lemmas with candidate lemma files `(path, text)` after
/// them (a candidate may cite a built-in lemma; a name defined twice is an
/// error at its line): how a rule citing a new lemma is proved before the
/// lemma is merged, without rebuilding.
pub fn builtin_with(files: &[(String, String)]) -> Result<Arc<Lemmas>, LemmaError> {
    if files.is_empty() {
        return Ok(builtin());
    }
    let mut all = vec![BUILTIN_FILE];
    all.extend(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    Ok(Arc::new(Lemmas::parse_files(&all)?))
}

/// What is wrong with a lemma file, or with a citation of a lemma.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LemmaError {
    /// A lemma file that does not lex, parse or state a lemma, at the
    /// position given.
    #[error("{file}:{error}")]
    File { file: String, error: ParseError },
    /// A citation that cannot be instantiated (the lemma's own statement,
    /// or the arguments a rule gives it).
    #[error("{0}")]
    Citation(String),
}

impl Lemma {
    /// An error at this lemma's line.
    fn error(&self, message: String) -> LemmaError {
        LemmaError::File {
            file: self.file.clone(),
            error: ParseError::new(
                Span {
                    line: self.line,
                    col: 1,
                },
                message,
            ),
        }
    }
}

impl Lemmas {
    pub fn empty() -> Lemmas {
        Lemmas::from_vec(Vec::new(), Vec::new())
    }

    fn from_vec(lemmas: Vec<Lemma>, sources: Vec<(String, String)>) -> Lemmas {
        let results = lemmas.iter().map(|_| Mutex::new(None)).collect();
        Lemmas {
            lemmas,
            results,
            sources,
        }
    }

    /// The files `(label, text)` this set was read from.
    pub fn sources(&self) -> &[(String, String)] {
        &self.sources
    }

    /// Takes `r` as its lemma's proof where that lemma has none yet: a
    /// worker process is told what its parent proved, not proving it again.
    pub fn assume(&self, r: LemmaResult) {
        let Some(i) = self.index(&r.lemma) else {
            return;
        };
        let mut slot = self.results[i].lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(r);
        }
    }

    /// Parses lemma files `(label, text)` into one set.
    pub fn parse_files(files: &[(&str, &str)]) -> Result<Lemmas, LemmaError> {
        let mut all = Vec::new();
        for (file, text) in files {
            all.extend(parse_lemmas(file, text)?);
        }
        for (i, l) in all.iter().enumerate() {
            if let Some(p) = all[..i].iter().find(|p| p.name == l.name) {
                return Err(l.error(format!(
                    "lemma `{}` is already defined at {}:{}",
                    l.name, p.file, p.line
                )));
            }
            if let Some(u) = l
                .uses
                .iter()
                .find(|u| !all[..i].iter().any(|p| p.name == u.name))
            {
                return Err(l.error(format!(
                    "lemma `{}` cites `{}`, which is not a lemma written above it",
                    l.name, u.name
                )));
            }
        }
        let sources = files
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect();
        Ok(Lemmas::from_vec(all, sources))
    }

    pub fn parse(file: &str, text: &str) -> Result<Lemmas, LemmaError> {
        Lemmas::parse_files(&[(file, text)])
    }

    pub fn get(&self, name: &str) -> Option<&Lemma> {
        self.lemmas.iter().find(|l| l.name == name)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.lemmas.iter().position(|l| l.name == name)
    }

    /// The lemma's proof (proved on first call, then remembered).
    pub fn result(
        &self,
        name: &str,
        timeout: Duration,
        cache: Option<&crate::cache::Cache>,
    ) -> LemmaResult {
        let Some(i) = self.index(name) else {
            return LemmaResult {
                lemma: name.to_string(),
                verdict: VerdictKind::Refused,
                detail: "no lemma of this name".into(),
                cached: false,
                seconds: 0.0,
            };
        };
        // Held while proving, so that the lemma is proved once; a lemma
        // only waits for lemmas above it.
        let mut slot = self.results[i].lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = &*slot {
            return r.clone();
        }
        // Z3 gets three per-check timeouts, cvc5 (only where Z3 gives up)
        // two: lemmas are proved once and cached, but a cold run proves
        // them beside the rules, on the same cores. This is the lemma's own
        // time, whatever query first asked for it (a nested deadline
        // replaces the caller's until it returns).
        let own = Instant::now() + timeout * crate::solver::QUERY_FACTOR;
        // In a Z3 context of its own: in the caller's, where other
        // queries have built terms, Z3 4.8.12 goes down other paths.
        let r = crate::solver::with_deadline(own, || {
            z3::with_z3_config(&z3::Config::new(), || {
                self.prove(&self.lemmas[i], timeout, cache)
            })
        });
        *slot = Some(r.clone());
        r
    }

    /// Proves every lemma (each once).
    pub fn prove_all(
        &self,
        timeout: Duration,
        cache: Option<&crate::cache::Cache>,
    ) -> Vec<LemmaResult> {
        use rayon::prelude::*;
        self.lemmas
            .par_iter()
            .map(|l| self.result(&l.name, timeout, cache))
            .collect()
    }

    fn prove(
        &self,
        l: &Lemma,
        timeout: Duration,
        cache: Option<&crate::cache::Cache>,
    ) -> LemmaResult {
        let start = Instant::now();
        let done = |verdict: VerdictKind, detail: String, cached: bool| LemmaResult {
            lemma: l.name.clone(),
            verdict,
            detail,
            cached,
            seconds: start.elapsed().as_secs_f64(),
        };
        // The lemmas it cites, proved first.
        for u in &l.uses {
            let r = self.result(&u.name, timeout, cache);
            if !r.proved() {
                return done(
                    VerdictKind::Refused,
                    format!("it cites `{}`, which is not proved ({})", u.name, r.detail),
                    false,
                );
            }
        }
        crate::poly::take_nonlinear();
        let env: Vec<(String, Poly)> = l
            .params
            .iter()
            .map(|p| {
                (
                    p.clone(),
                    Poly::atom(Int::new_const(format!("{}.{p}", l.name))),
                )
            })
            .collect();
        let mut gcds = GcdMemo::default();
        let stated = match self.statement(l, &env, &mut gcds, 0) {
            Ok(s) => s,
            Err(e) => return done(VerdictKind::Refused, e.to_string(), false),
        };
        let mut facts = stated.facts.clone();
        for u in &l.uses {
            let lemma = self.get(&u.name).expect("checked when proving it");
            match self.instances(lemma, u, &l.params, &env, &mut gcds) {
                Ok(v) => facts.extend(v),
                Err(e) => return done(VerdictKind::Refused, e.to_string(), false),
            }
        }
        facts.append(&mut gcds.facts);
        let premise = conj(&facts);
        let negated = Bool::and(&[stated.antecedent.clone(), stated.conclusion.not()]);
        let key = crate::cache::Query::new("lemma", &[&premise.to_string(), &negated.to_string()]);
        if let Some(c) = cache {
            if c.is_proved(&key) {
                return done(VerdictKind::Proved, "z3 (cached)".into(), true);
            }
        }
        let solver = Solver::new();
        solver.assert(&premise);
        solver.assert(&negated);
        let z3 = check_restarting(&solver, timeout);
        let proved_by = match z3 {
            SatResult::Unsat => Some("z3".to_string()),
            SatResult::Sat => {
                let model = solver
                    .get_model()
                    .map(|m| {
                        env.iter()
                            .map(|(n, p)| {
                                let v = m
                                    .eval(&p.to_int(), true)
                                    .and_then(|v| v.as_i128())
                                    .map_or("?".into(), |v| v.to_string());
                                format!("{n} = {v}")
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                return done(VerdictKind::Failed, format!("false at {model}"), false);
            }
            SatResult::Unknown => {
                // Another solver on the same formula.
                let smt = smt2_of(&[premise.clone(), negated.clone()]);
                let answer = match crate::solver::time_left(timeout * 2) {
                    Some(t) => crate::cvc5::run(&smt, t),
                    None => crate::cvc5::Answer::Unknown("out of time".into()),
                };
                match answer {
                    crate::cvc5::Answer::Unsat => Some("cvc5 (z3 gave up)".to_string()),
                    crate::cvc5::Answer::Sat(_) => {
                        return done(VerdictKind::Failed, "cvc5 finds it false".into(), false)
                    }
                    crate::cvc5::Answer::Unknown(why) => {
                        return done(
                            VerdictKind::Unknown,
                            format!(
                                "z3: {}; cvc5: {why}",
                                solver.get_reason_unknown().unwrap_or_default()
                            ),
                            false,
                        )
                    }
                }
            }
        };
        // Only Z3's proofs are cached: a cached lemma reads "z3 (cached)".
        if let (Some(c), Some("z3")) = (cache, proved_by.as_deref()) {
            c.record_proof(&key, &format!("lemma {}", l.name), SolverKind::Z3);
        }
        done(VerdictKind::Proved, proved_by.unwrap_or_default(), false)
    }

    /// A lemma's statement with its parameters bound to `env` (integer
    /// terms): the antecedent (hypothesis and non-zero divisors), the
    /// conclusion, and facts its helpers need (gcd definitions).
    fn statement(
        &self,
        l: &Lemma,
        env: &[(String, Poly)],
        gcds: &mut GcdMemo,
        _depth: usize,
    ) -> Result<Stated, ParseError> {
        let mut cx = Eval {
            env,
            nonzero: Vec::new(),
            gcds,
        };
        let concl = cx.cond(&l.conclusion)?;
        let hyp = match &l.hypothesis {
            Some(h) => cx.cond(h)?,
            None => Bool::from_bool(true),
        };
        let mut ante = vec![hyp];
        ante.append(&mut cx.nonzero);
        Ok(Stated {
            antecedent: conj(&ante),
            conclusion: concl,
            facts: Vec::new(),
        })
    }

    /// The instances of `lemma` cited by `u` in a context whose names are
    /// `names` with integer values `env`: one per argument tuple (the
    /// cited arguments, or every assignment of the context's values to the
    /// lemma's parameters).
    fn instances(
        &self,
        lemma: &Lemma,
        u: &LemmaUse,
        names: &[String],
        env: &[(String, Poly)],
        gcds: &mut GcdMemo,
    ) -> Result<Vec<Bool>, LemmaError> {
        let tuples: Vec<Vec<Poly>> = match &u.args {
            Some(args) => {
                if args.len() != lemma.params.len() {
                    return Err(LemmaError::Citation(format!(
                        "`{}` takes {} argument(s), {} given",
                        lemma.name,
                        lemma.params.len(),
                        args.len()
                    )));
                }
                let mut cx = Eval {
                    env,
                    nonzero: Vec::new(),
                    gcds,
                };
                let vals: Result<Vec<Poly>, ParseError> = args.iter().map(|a| cx.int(a)).collect();
                vec![vals.map_err(|e| LemmaError::Citation(e.to_string()))?]
            }
            None => {
                let vals: Vec<Poly> = names
                    .iter()
                    .filter_map(|n| env.iter().find(|e| e.0 == *n).map(|e| e.1.clone()))
                    .collect();
                let k = lemma.params.len() as u32;
                let count = (vals.len() as u64).saturating_pow(k);
                if count > MAX_INSTANCES {
                    return Err(LemmaError::Citation(format!(
                        "`using {}` without arguments would make {count} instances (more than {MAX_INSTANCES}): give its arguments",
                        lemma.name
                    )));
                }
                let mut out: Vec<Vec<Poly>> = vec![Vec::new()];
                for _ in 0..k {
                    out = out
                        .into_iter()
                        .flat_map(|t| {
                            vals.iter().map(move |v| {
                                let mut t = t.clone();
                                t.push(v.clone());
                                t
                            })
                        })
                        .collect();
                }
                out
            }
        };
        let mut facts = Vec::new();
        for t in tuples {
            let lenv: Vec<(String, Poly)> = lemma.params.iter().cloned().zip(t).collect();
            let s = self
                .statement(lemma, &lenv, gcds, 0)
                .map_err(|e| LemmaError::Citation(format!("`{}`: {e}", lemma.name)))?;
            facts.extend(s.facts);
            facts.push(s.antecedent.implies(&s.conclusion));
        }
        Ok(facts)
    }

    /// The instances of the lemmas `rule` cites, in its query (integer
    /// theory), and the lemmas refused (not proved: never assumed), with
    /// why. Each proved lemma's instances are conjoined; a refused one is
    /// left out, so a rule that does not need it may still be proved.
    pub fn for_query(
        &self,
        q: &RuleQuery,
        timeout: Duration,
        cache: Option<&crate::cache::Cache>,
    ) -> (Vec<Bool>, Vec<String>) {
        let mut facts = Vec::new();
        let mut refused = Vec::new();
        if q.enc.mode != Mode::Int || q.rule.lemmas.is_empty() {
            return (facts, refused);
        }
        let mut names = Vec::new();
        let mut env = Vec::new();
        for (v, s) in q.rule.vars.iter().zip(&q.syms) {
            if let Term::N(Num::I(p)) = &s.val.val {
                names.push(v.name.clone());
                env.push((v.name.clone(), p.clone()));
            }
        }
        let mut gcds = GcdMemo {
            query: Some(q),
            ..GcdMemo::default()
        };
        for u in &q.rule.lemmas {
            let r = self.result(&u.name, timeout, cache);
            if !r.proved() {
                refused.push(format!("{} ({}: {})", u.name, r.verdict, r.detail));
                continue;
            }
            let lemma = self.get(&u.name).expect("proved, so it exists");
            match self.instances(lemma, u, &names, &env, &mut gcds) {
                Ok(v) => facts.extend(v),
                Err(e) => refused.push(format!("{} ({e})", u.name)),
            }
        }
        facts.append(&mut gcds.facts);
        (facts, refused)
    }
}

/// Automatic instantiation (no arguments) makes at most this many.
const MAX_INSTANCES: u64 = 64;

struct Stated {
    antecedent: Bool,
    conclusion: Bool,
    facts: Vec<Bool>,
}

/// `gcd` terms: in a rule's query, the query's own (so that a lemma about
/// `gcd(M, D)` talks about the guard's `gcd(M, D)`); in a lemma's proof,
/// fresh symbols defined by Bezout's identity (memoized per arguments).
#[derive(Default)]
struct GcdMemo<'q, 'r> {
    query: Option<&'q RuleQuery<'r>>,
    own: Vec<(String, Poly)>,
    facts: Vec<Bool>,
}

impl GcdMemo<'_, '_> {
    fn gcd(&mut self, x: &Poly, y: &Poly) -> Poly {
        if let Some(q) = self.query {
            let (g, fact) = q.gcd_term(&Num::I(x.clone()), &Num::I(y.clone()));
            self.facts.push(fact);
            return g.poly().clone();
        }
        let key = format!("{}|{}", x.to_int(), y.to_int());
        if let Some((_, g)) = self.own.iter().find(|(k, _)| *k == key) {
            return g.clone();
        }
        let k = self.own.len();
        let (g, fact) = bezout_gcd(&x.to_int(), &y.to_int(), &format!("lemma.gcd{k}"));
        self.facts.push(fact);
        let g = Poly::atom(g);
        self.own.push((key, g.clone()));
        g
    }
}

/// `g = gcd(x, y)` as facts about fresh `g`, `s`, `t`: `g >= 0` divides
/// both and equals `s*x + t*y` (Bezout), which pins `g` to the gcd.
pub(crate) fn bezout_gcd(x: &Int, y: &Int, name: &str) -> (Int, Bool) {
    let g = Int::new_const(name.to_string());
    let s = Int::new_const(format!("{name}.s"));
    let t = Int::new_const(format!("{name}.t"));
    let zero = Int::from_i64(0);
    let divides = |d: &Int, n: &Int| {
        Bool::or(&[
            Bool::and(&[d.eq(&zero), n.eq(&zero)]),
            Bool::and(&[d.eq(&zero).not(), n.modulo(d).eq(&zero)]),
        ])
    };
    let fact = Bool::and(&[
        zero.le(&g),
        divides(&g, x),
        divides(&g, y),
        Int::add(&[&Int::mul(&[&s, x]), &Int::mul(&[&t, y])]).eq(&g),
    ]);
    (g, fact)
}

/// Evaluates lemma expressions to integer terms of the encoding.
struct Eval<'a, 'q, 'r> {
    env: &'a [(String, Poly)],
    /// Divisors, which must be non-zero.
    nonzero: Vec<Bool>,
    gcds: &'a mut GcdMemo<'q, 'r>,
}

fn enc() -> Enc {
    Enc::new(Mode::Int, 64)
}

fn add(a: &Poly, b: &Poly) -> Poly {
    a.add(b)
        .unwrap_or_else(|| Poly::atom(Int::add(&[a.to_int(), b.to_int()])))
}

fn sub(a: &Poly, b: &Poly) -> Poly {
    a.sub(b)
        .unwrap_or_else(|| Poly::atom(Int::sub(&[a.to_int(), b.to_int()])))
}

fn mul(a: &Poly, b: &Poly) -> Poly {
    a.mul(b)
        .unwrap_or_else(|| Poly::atom(Int::mul(&[a.to_int(), b.to_int()])))
}

impl Eval<'_, '_, '_> {
    fn int(&mut self, a: &Ast) -> Result<Poly, ParseError> {
        let at = |m: &str| ParseError::new(a.span, m);
        Ok(match &a.kind {
            AstKind::Int(v) => Poly::constant(*v),
            AstKind::Name(n) => self
                .env
                .iter()
                .find(|e| e.0 == *n)
                .map(|e| e.1.clone())
                .ok_or_else(|| at(&format!("`{n}` is not a parameter")))?,
            AstKind::Unary(Op::Neg, x) => sub(&Poly::default(), &self.int(x)?),
            AstKind::Binary(op, x, y) => {
                let (x, y) = (self.int(x)?, self.int(y)?);
                self.arith(*op, &x, &y)
                    .ok_or_else(|| at("not an integer operator"))?
            }
            AstKind::Call { name, args, .. } => {
                let vals: Result<Vec<Poly>, ParseError> =
                    args.iter().map(|x| self.int(x)).collect();
                let vals = vals?;
                match (name.as_str(), vals.as_slice()) {
                    ("gcd", [x, y]) => self.gcds.gcd(x, y),
                    ("abs", [x]) => {
                        let neg = sub(&Poly::default(), x);
                        let c = enc().le(&Num::I(Poly::default()), &Num::I(x.clone()));
                        Poly::atom(c.ite(&x.to_int(), &neg.to_int()))
                    }
                    (n, [x, y]) => match Op::by_call(n) {
                        Some(op) => self
                            .arith(op, x, y)
                            .ok_or_else(|| at("not an integer op"))?,
                        None => return Err(at(&format!("unknown function `{n}`"))),
                    },
                    (n, _) => return Err(at(&format!("`{n}`: wrong number of arguments"))),
                }
            }
            _ => return Err(at("expected an integer expression")),
        })
    }

    fn arith(&mut self, op: Op, x: &Poly, y: &Poly) -> Option<Poly> {
        Some(match op {
            Op::Add => add(x, y),
            Op::Sub => sub(x, y),
            Op::Mul => mul(x, y),
            Op::Min | Op::Max => {
                let e = enc();
                let le = e.le(&Num::I(x.clone()), &Num::I(y.clone()));
                let (a, b) = if op == Op::Min { (x, y) } else { (y, x) };
                Poly::atom(le.ite(&a.to_int(), &b.to_int()))
            }
            Op::Div | Op::FloorDiv | Op::CeilDiv => {
                self.nonzero.push(y.to_int().eq(Int::from_i64(0)).not());
                int_quotient(op, x, y)
            }
            Op::Rem | Op::Mod => {
                self.nonzero.push(y.to_int().eq(Int::from_i64(0)).not());
                int_remainder(op, x, y)
            }
            _ => return None,
        })
    }

    fn cond(&mut self, a: &Ast) -> Result<Bool, ParseError> {
        let at = |m: &str| ParseError::new(a.span, m);
        Ok(match &a.kind {
            AstKind::Bool(b) => Bool::from_bool(*b),
            AstKind::Unary(Op::Not, x) => self.cond(x)?.not(),
            AstKind::Binary(op @ (Op::And | Op::Or | Op::Xor), x, y) => {
                let (x, y) = (self.cond(x)?, self.cond(y)?);
                match op {
                    Op::And => Bool::and(&[x, y]),
                    Op::Or => Bool::or(&[x, y]),
                    _ => x.xor(&y),
                }
            }
            AstKind::Binary(op @ (Op::Lt | Op::Le | Op::Eq | Op::Ne), x, y) => {
                let (x, y) = (Num::I(self.int(x)?), Num::I(self.int(y)?));
                let e = enc();
                match op {
                    Op::Lt => e.lt(&x, &y),
                    Op::Le => e.le(&x, &y),
                    Op::Eq => e.eq(&x, &y),
                    _ => e.eq(&x, &y).not(),
                }
            }
            AstKind::Call { name, args, .. } if name == "divides" && args.len() == 2 => {
                let (d, n) = (self.int(&args[0])?, self.int(&args[1])?);
                let zero = Num::I(Poly::default());
                let dn = Num::I(d.clone());
                let nz = enc().eq(&dn, &zero).not();
                // Only where d != 0 (the conjunct decides otherwise).
                let r = int_remainder(Op::Rem, &n, &d);
                Bool::and(&[nz, enc().eq(&Num::I(r), &zero)])
            }
            _ => return Err(at("expected a condition")),
        })
    }
}

/// A conjunction (`true` when empty: Z3 prints a nullary `and` that other
/// solvers do not read).
fn conj(v: &[Bool]) -> Bool {
    match v {
        [] => Bool::from_bool(true),
        [one] => one.clone(),
        _ => Bool::and(v),
    }
}

/// The SMT-LIB2 text of a conjunction of assertions, with its
/// declarations (for another solver).
pub(crate) fn smt2_of(asserts: &[Bool]) -> String {
    let s = Solver::new();
    for a in asserts {
        s.assert(a);
    }
    s.to_smt2()
}

/// Z3 on a lemma: a lemma is proved once per process and every rule citing
/// it depends on it, so Z3 gets three timeouts in all (floordiv_nest: 1.3 s
/// alone, 8.9 s beside 24 rule queries on 2 loaded cores). Its time over
/// nonlinear integers is heavy-tailed in the seed and in the term ids of
/// the context the lemma is built in (seeds 0 to 7 in a fresh context:
/// mul_mod_gcd 2.5 to 3.6 s but twice 33 s; floordiv_nest in the context
/// of whichever rule asked first: 0.6 s, but not within 30 s in 4 cold runs
/// of 17), so a call cut short is tried again with the next seed and twice
/// the share, instead of waiting out the tail.
fn check_restarting(solver: &Solver, timeout: Duration) -> SatResult {
    let end = Instant::now() + timeout * 3;
    let mut share = timeout;
    for seed in 0u32.. {
        let Some(left) = crate::solver::time_left(end.saturating_duration_since(Instant::now()))
        else {
            break;
        };
        // The first call with Z3's defaults: setting even seed 0 explicitly
        // sends 4.8.12 down other paths (floordiv_nest 0.8 -> 6 s,
        // mul_mod_gcd 2 -> 7.7 s).
        if seed > 0 {
            let mut p = z3::Params::new();
            p.set_u32("random_seed", seed);
            solver.set_params(&p);
        }
        match check_within(solver, share.min(left)) {
            SatResult::Unknown => share *= 2,
            r => return r,
        }
    }
    SatResult::Unknown
}

/// Parses a lemma file: `lemma NAME(PARAMS): CONCLUSION [if HYPOTHESIS]
/// [using LEMMA(ARGS), ...]`, comments above each stating it in words.
pub fn parse_lemmas(file: &str, text: &str) -> Result<Vec<Lemma>, LemmaError> {
    let mut out = Vec::new();
    let err = |line: u32, m: String| LemmaError::File {
        file: file.to_string(),
        error: ParseError::new(Span { line, col: 1 }, m),
    };
    let at = |error: ParseError| LemmaError::File {
        file: file.to_string(),
        error,
    };
    for st in statements(text).map_err(at)? {
        let (line, comment) = (st.line, st.comment);
        let mut c = Cursor::new(st.toks);
        if c.eat_ident("group") {
            c.name("a group name").map_err(at)?;
            continue;
        }
        let parsed = (|| {
            c.expect_ident("lemma")?;
            let (name, _) = c.name("a lemma name")?;
            c.expect_punct("(")?;
            let mut params = Vec::new();
            if !c.eat_punct(")") {
                loop {
                    params.push(c.name("a parameter")?.0);
                    if c.eat_punct(")") {
                        break;
                    }
                    c.expect_punct(",")?;
                }
            }
            c.expect_punct(":")?;
            let conclusion = c.expr()?;
            let hypothesis = if c.eat_ident("if") {
                Some(c.expr()?)
            } else {
                None
            };
            let uses = engine::rules::parse::parse_using(&mut c)?;
            c.expect_eol()?;
            Ok::<_, engine::parse::ParseError>((name, params, conclusion, hypothesis, uses))
        })()
        .map_err(at)?;
        let (name, params, conclusion, hypothesis, uses) = parsed;
        let mut seen = names(&conclusion);
        if let Some(h) = &hypothesis {
            seen.extend(names(h));
        }
        for (u, _) in &uses {
            for a in u.args.iter().flatten() {
                seen.extend(names(a));
            }
        }
        if let Some((n, sp)) = seen.iter().find(|(n, _)| !params.iter().any(|p| p == n)) {
            return Err(err(
                sp.line,
                format!("`{n}` is not a parameter of lemma `{name}`"),
            ));
        }
        if comment.is_empty() {
            return Err(err(
                line,
                format!("lemma `{name}` has no comment stating it"),
            ));
        }
        out.push(Lemma {
            name,
            params,
            conclusion,
            hypothesis,
            uses: uses.into_iter().map(|(u, _)| u).collect(),
            comment: comment.join(" "),
            file: file.to_string(),
            line,
            text: st.text.split_whitespace().collect::<Vec<_>>().join(" "),
        });
    }
    Ok(out)
}

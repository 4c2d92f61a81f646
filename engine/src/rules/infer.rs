//! Type inference for rules: every subterm of a rule gets a type class;
//! classes are unified (union-find) as the rule is read, then resolved to
//! a fixed dtype or a type variable of the rule.

use crate::ir::DType;

/// Union-find over type classes.
#[derive(Default)]
pub(super) struct Infer {
    pub(super) parent: Vec<usize>,
    pub(super) fixed: Vec<Option<DType>>,
    pub(super) int: Vec<bool>,
    pub(super) name: Vec<Option<String>>,
}

impl Infer {
    pub(super) fn fresh(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.fixed.push(None);
        self.int.push(false);
        self.name.push(None);
        self.parent.len() - 1
    }

    pub(super) fn fixed(&mut self, d: DType) -> usize {
        let c = self.fresh();
        self.fixed[c] = Some(d);
        c
    }

    /// The class's representative (iterative: a rule may be one long chain).
    pub(super) fn find(&mut self, c: usize) -> usize {
        let mut r = c;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut x = c;
        while self.parent[x] != r {
            let next = self.parent[x];
            self.parent[x] = r;
            x = next;
        }
        r
    }

    pub(super) fn check(&self, r: usize) -> Result<(), String> {
        if self.int[r] && self.fixed[r] == Some(DType::Bool) {
            return Err("a bool is used where an integer is needed".into());
        }
        Ok(())
    }

    pub(super) fn unify(&mut self, a: usize, b: usize) -> Result<(), String> {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return Ok(());
        }
        let fixed = match (self.fixed[a], self.fixed[b]) {
            (Some(x), Some(y)) if x != y => return Err(format!("dtype mismatch: {x} vs {y}")),
            (x, y) => x.or(y),
        };
        let name = match (&self.name[a], &self.name[b]) {
            (Some(x), Some(y)) if x != y => {
                return Err(format!(
                    "type variables `{x}` and `{y}` would have to be equal"
                ))
            }
            (x, y) => x.clone().or(y.clone()),
        };
        if let (Some(name), Some(fixed)) = (&name, &fixed) {
            return Err(format!("type variable `{name}` would be fixed to {fixed}"));
        }
        self.parent[b] = a;
        self.fixed[a] = fixed;
        self.int[a] |= self.int[b];
        self.name[a] = name;
        self.check(a)
    }

    pub(super) fn need_int(&mut self, c: usize) -> Result<(), String> {
        let r = self.find(c);
        self.int[r] = true;
        self.check(r)
    }

    pub(super) fn need(&mut self, c: usize, d: DType) -> Result<(), String> {
        let f = self.fixed(d);
        self.unify(c, f)
    }
}

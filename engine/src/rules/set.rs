//! Rule sets: rules grouped and ordered, read from rule files, the
//! built-in set, and candidate files laid over it.

use super::ast::Rule;
use super::parse::{parse_rule, statements};
use crate::text::parse::{Cursor, ParseError, Span};

/// Why a rule file or rule set could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A syntax or type error in a file, with its line and column.
    #[error("{file}:{err}")]
    Parse { file: String, err: ParseError },
    /// The group order does not list the groups the files define.
    #[error("{0}")]
    Order(String),
    /// A candidate file that defines no rule: proving or laying it over
    /// the engine would silently do nothing.
    #[error("{0}: the file defines no rules")]
    NoRules(String),
    /// A rule asked for by name that the set does not have.
    #[error("no rule named `{0}`")]
    NoSuchRule(String),
}

/// A named group of rules, tried in file order.
#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub rules: Vec<Rule>,
}

/// Rules grouped and ordered: at every node the groups are tried in order,
/// and within a group the rules in file order; the first that fires wins.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    pub groups: Vec<Group>,
}

impl RuleSet {
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.groups.iter().flat_map(|g| g.rules.iter())
    }

    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules().find(|r| r.name == name)
    }

    /// The rules named, in the order named; every rule when none is.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Rule>, RuleError> {
        if names.is_empty() {
            return Ok(self.rules().collect());
        }
        names
            .iter()
            .map(|n| self.rule(n).ok_or_else(|| RuleError::NoSuchRule(n.clone())))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.groups.iter().map(|g| g.rules.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parses one rule file. Groups appear in file order.
    pub fn parse(file: &str, text: &str) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        set.add_file(file, text)?;
        Ok(set)
    }

    /// Adds the rules of one file, appending its groups (or extending a
    /// group of the same name).
    pub fn add_file(&mut self, file: &str, text: &str) -> Result<(), RuleError> {
        let wrap = |e: ParseError| RuleError::Parse {
            file: file.to_string(),
            err: e,
        };
        let default_group = std::path::Path::new(file)
            .file_stem()
            .map_or("rules".to_string(), |s| s.to_string_lossy().into_owned());
        let mut group = default_group;
        let mut group_why: Option<String> = None;
        for st in statements(text).map_err(wrap)? {
            let mut c = Cursor::new(st.toks);
            c.allow_types = true;
            if c.eat_ident("group") {
                let (name, _) = c.name("a group name").map_err(wrap)?;
                c.expect_eol().map_err(wrap)?;
                // A group's justification covers each of its rules (of
                // this file) that has none of its own.
                group_why = match st.terminates {
                    Some((why, at)) if why.is_empty() => {
                        return Err(wrap(ParseError::new(
                            at,
                            "`terminates:` needs a justification: why the rules stop",
                        )))
                    }
                    Some((why, _)) => Some(why),
                    None => None,
                };
                group = name;
                continue;
            }
            let mut rule = parse_rule(&mut c, file, &group).map_err(wrap)?;
            rule.comment = st.comment.join(" ");
            if let Some((why, at)) = st.terminates {
                if why.is_empty() {
                    return Err(wrap(ParseError::new(
                        at,
                        "`terminates:` needs a justification: why the rule stops",
                    )));
                }
                rule.terminates = Some(why);
            } else {
                rule.terminates = group_why.clone();
            }
            let body = st.text.split_once(':').map_or("", |(_, b)| b);
            rule.text = body.split_whitespace().collect::<Vec<_>>().join(" ");
            if let Some(prev) = self.rule(&rule.name) {
                return Err(wrap(ParseError::new(
                    Span {
                        line: rule.line,
                        col: 1,
                    },
                    format!(
                        "rule `{}` is already defined at {}:{}",
                        rule.name, prev.file, prev.line
                    ),
                )));
            }
            match self.groups.iter_mut().find(|g| g.name == group) {
                Some(g) => g.rules.push(rule),
                None => self.groups.push(Group {
                    name: group.clone(),
                    rules: vec![rule],
                }),
            }
        }
        Ok(())
    }

    /// Reorders groups to follow `order` (group names, one per line, `#`
    /// comments). Every group must be listed exactly once.
    pub fn apply_order(&mut self, order: &str) -> Result<(), RuleError> {
        let names: Vec<&str> = order
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        let mut out = Vec::new();
        for n in &names {
            let Some(i) = self.groups.iter().position(|g| g.name == *n) else {
                return Err(RuleError::Order(format!(
                    "the order lists group `{n}`, which no rule file defines"
                )));
            };
            out.push(self.groups.remove(i));
        }
        if let Some(g) = self.groups.first() {
            return Err(RuleError::Order(format!(
                "group `{}` is missing from the order",
                g.name
            )));
        }
        self.groups = out;
        Ok(())
    }
}

/// The built-in rule files (name, text), embedded at build time.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("invalid.rules", include_str!("../../rules/invalid.rules")),
    ("fold.rules", include_str!("../../rules/fold.rules")),
    ("identity.rules", include_str!("../../rules/identity.rules")),
    ("self.rules", include_str!("../../rules/self.rules")),
    ("cast.rules", include_str!("../../rules/cast.rules")),
    (
        "recombine.rules",
        include_str!("../../rules/recombine.rules"),
    ),
    ("bool.rules", include_str!("../../rules/bool.rules")),
    ("where.rules", include_str!("../../rules/where.rules")),
    ("range.rules", include_str!("../../rules/range.rules")),
    ("compare.rules", include_str!("../../rules/compare.rules")),
    ("minmax.rules", include_str!("../../rules/minmax.rules")),
    ("combine.rules", include_str!("../../rules/combine.rules")),
    ("chain.rules", include_str!("../../rules/chain.rules")),
    (
        "range_divmod.rules",
        include_str!("../../rules/range_divmod.rules"),
    ),
    (
        "advanced_div.rules",
        include_str!("../../rules/advanced_div.rules"),
    ),
];

/// The lowering rule files: not part of the simplification order; a
/// backend applies them after simplifying (floor division to truncating).
pub const LOWERING_FILES: &[(&str, &str)] = &[(
    "lower_divmod.rules",
    include_str!("../../rules/lower_divmod.rules"),
)];

/// Parses the lowering rules (one group per file, in file order).
pub fn load_lowering() -> Result<RuleSet, RuleError> {
    let mut set = RuleSet::default();
    for (name, text) in LOWERING_FILES {
        set.add_file(&format!("engine/rules/{name}"), text)?;
    }
    Ok(set)
}

/// The group order of the built-in rules (`engine/rules/order`).
pub const BUILTIN_ORDER: &str = include_str!("../../rules/order");

/// Parses the built-in rule files and orders their groups.
pub fn load_builtin() -> Result<RuleSet, RuleError> {
    let mut set = RuleSet::default();
    for (name, text) in BUILTIN_FILES {
        set.add_file(&format!("engine/rules/{name}"), text)?;
    }
    set.apply_order(BUILTIN_ORDER)?;
    Ok(set)
}

/// The built-in rule set, parsed once. The files are part of the build and
/// checked by the test suite, so a failure here is a bug in them.
pub fn builtin() -> &'static RuleSet {
    static SET: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
    SET.get_or_init(|| match load_builtin() {
        Ok(s) => s,
        Err(e) => panic!("built-in rules do not load: {e}"),
    })
}

impl RuleSet {
    /// `self` with the rules of `extra` laid over it: a rule named like a
    /// rule of `self` replaces it in place (same group, same position, so
    /// the rewrite order is unchanged); any other rule is appended to the
    /// group of its name, and a group `self` lacks (a file without a
    /// `group` header is a group named after the file) comes after all of
    /// `self`'s groups, in the order `extra` names them. This is how a
    /// contributor fuzzes a changed guard or a new pattern against
    /// everything else, and how the tests inject a broken rule.
    pub fn overlay(&self, extra: &RuleSet) -> RuleSet {
        let mut out = self.clone();
        for rule in extra.rules() {
            let slot = out
                .groups
                .iter_mut()
                .flat_map(|g| g.rules.iter_mut())
                .find(|r| r.name == rule.name);
            if let Some(slot) = slot {
                let group = slot.group.clone();
                *slot = rule.clone();
                slot.group = group;
                continue;
            }
            match out.groups.iter_mut().find(|g| g.name == rule.group) {
                Some(g) => g.rules.push(rule.clone()),
                None => out.groups.push(Group {
                    name: rule.group.clone(),
                    rules: vec![rule.clone()],
                }),
            }
        }
        out
    }

    /// One line per group that laying `extra` over `self` adds (see
    /// [`RuleSet::overlay`]): where its rules run, so that a misspelt
    /// group name does not go unnoticed.
    pub fn overlay_notes(&self, extra: &RuleSet) -> Vec<String> {
        let mut notes = Vec::new();
        for g in &extra.groups {
            if self.groups.iter().any(|s| s.name == g.name) {
                continue;
            }
            let new: Vec<&Rule> = g
                .rules
                .iter()
                .filter(|r| self.rule(&r.name).is_none())
                .collect();
            let Some(first) = new.first() else { continue };
            notes.push(format!(
                "{}:{}: group `{}` is not one of the engine's groups: its {} tried after every built-in group",
                first.file,
                first.line,
                g.name,
                if new.len() == 1 {
                    "rule is".to_string()
                } else {
                    format!("{} rules are", new.len())
                }
            ));
        }
        notes
    }
}

impl RuleSet {
    /// `self` with one rule file laid over it ([`RuleSet::overlay`]).
    pub fn with_file(&self, file: &str, text: &str) -> Result<RuleSet, RuleError> {
        Ok(self.overlay(&RuleSet::parse(file, text)?))
    }
}

/// The rules of candidate files `(label, text)`, in file order. A file
/// with no rules is an error.
pub fn candidates(files: &[(String, String)]) -> Result<RuleSet, RuleError> {
    let mut set = RuleSet::default();
    for (file, text) in files {
        let before = set.len();
        set.add_file(file, text)?;
        if set.len() == before {
            return Err(RuleError::NoRules(file.clone()));
        }
    }
    Ok(set)
}

/// Candidate rule files as every command takes them (`--rules`): read
/// once, one behaviour. `prove` proves `candidates`; the engine runs
/// `engine`, the built-in rules with the candidates laid over them
/// ([`RuleSet::overlay`]); every command prints `notes`.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub candidates: RuleSet,
    pub engine: RuleSet,
    pub notes: Vec<String>,
}

/// Reads candidate files `(label, text)` over the built-in rules.
pub fn load_candidates(files: &[(String, String)]) -> Result<Loaded, RuleError> {
    let candidates = candidates(files)?;
    Ok(Loaded {
        engine: builtin().overlay(&candidates),
        notes: builtin().overlay_notes(&candidates),
        candidates,
    })
}

/// The built-in rules with candidate files laid over them.
pub fn builtin_with(files: &[(String, String)]) -> Result<RuleSet, RuleError> {
    Ok(load_candidates(files)?.engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_group_the_set_lacks_comes_after_its_groups_and_is_noted() {
        let base = builtin();
        let extra = RuleSet::parse(
            "dir/extra.rules",
            "rule mul_zero: x * 0 => 0 if valid(x)\nrule shl_one: x * 2 => x << 1 if vmin(x) >= 0\n",
        )
        .expect("parses");
        let out = base.overlay(&extra);
        // The built-in name is replaced in place, in its own group.
        let at = |set: &RuleSet, name: &str| set.rules().position(|r| r.name == name);
        assert_eq!(at(&out, "mul_zero"), at(base, "mul_zero"));
        assert_eq!(
            out.rule("mul_zero").map(|r| r.group.as_str()),
            Some("identity")
        );
        // The new one forms the last group, named after the file.
        let last = out.groups.last().expect("groups");
        assert_eq!(last.name, "extra");
        assert_eq!(last.rules.len(), 1);
        assert_eq!(
            base.overlay_notes(&extra),
            vec!["dir/extra.rules:2: group `extra` is not one of the engine's groups: its rule is tried after every built-in group".to_string()]
        );
    }
}

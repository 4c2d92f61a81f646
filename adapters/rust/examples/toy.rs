//! A complete tileproof peer in Rust (protocol 1): folds x + 0, 0 + x,
//! x * 1, 1 * x. Copy it to start an adapter for a Rust simplifier:
//! replace `fold` with a call into your compiler and narrow the profile to
//! what you checked. Run it under tileproof with
//! `tileproof fuzz --simplifier 'cargo run -q --example toy'`.
use tileproof_adapter::*;

struct Toy;

fn fold(t: &Tree) -> Result<Tree, Refuse> {
    let Tree::Op(op, args) = t else {
        return Ok(t.clone());
    };
    let args: Vec<Tree> = args.iter().map(fold).collect::<Result<_, _>>()?;
    let unit = match op.as_str() {
        "add" => 0,
        "mul" => 1,
        "sub" | "neg" | "min" | "max" | "div" | "rem" | "lt" | "le" | "eq" | "ne" | "and"
        | "or" | "not" | "where" => return Ok(Tree::Op(op.clone(), args)),
        other => {
            return Err(Refuse::Unsupported(format!(
                "op {other} is not in the profile"
            )))
        }
    };
    let is_unit = |t: &Tree| matches!(t, Tree::Const(c, Dtype::Index) if *c == unit);
    Ok(match &args[..] {
        [x, u] | [u, x] if is_unit(u) => x.clone(),
        _ => Tree::Op(op.clone(), args),
    })
}

impl Adapter for Toy {
    fn hello(&self) -> Hello {
        let ops = [
            "add", "sub", "mul", "neg", "min", "max", "div", "rem", "lt", "le", "eq", "ne", "and",
            "or", "not", "where",
        ];
        let profile = Profile {
            ops: ops.map(String::from).to_vec(),
            invalid: true,
            integers: Integers::Int64,
            bool_vars: true,
            partial_ops: PartialOps::Undefined,
            input_language: InputLanguage::default(),
        };
        Hello::new("toy", "1.0", profile)
    }

    fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse> {
        Ok(Simplified::trees(
            case.trees.iter().map(fold).collect::<Result<_, _>>()?,
        ))
    }
}

fn main() -> std::io::Result<()> {
    serve(Toy)
}

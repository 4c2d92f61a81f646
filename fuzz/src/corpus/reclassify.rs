//! A kept finding against a peer rewritten with the class its peer's
//! compiled code gives it now.

use super::replay::CaseReport;
use super::store::{reproducers_of, write_atomic, write_script};
use crate::checks::{self};
use crate::confirm::Class;
use std::fs;
use std::io::{self};
use std::path::{Path, PathBuf};

/// Rewrites a kept finding against a peer with its class as `rep` (a
/// [`judge`] of it) found it: its `# backend:` and `# relaxed:` lines
/// replaced, the file moved into its class's subdirectory of the peer's
/// corpus (or out of it), its reproducer written beside it (or a stale one
/// removed). Returns where the file is now.
pub fn reclassify(path: &Path, rep: &CaseReport) -> io::Result<PathBuf> {
    let text = fs::read_to_string(path)?;
    let mut lines: Vec<String> = Vec::new();
    let mut in_backend = false;
    for line in text.lines() {
        if line.starts_with("# backend:") {
            in_backend = true;
            continue;
        }
        if in_backend && line.starts_with("#   ") {
            continue;
        }
        in_backend = false;
        if line.starts_with("# relaxed:") {
            continue;
        }
        lines.push(line.to_string());
    }
    let mut header = Vec::new();
    if let Some(b) = &rep.backend {
        header.push(format!("# backend: {}", checks::one_line(b)));
        for l in &rep.backends {
            header.push(format!("#   {}", checks::one_line(l)));
        }
    }
    if let Some(r) = &rep.relaxed {
        header.push(format!("# relaxed: {}", checks::one_line(r)));
    }
    let at = lines
        .iter()
        .position(|l| l.starts_with("# simplifier:"))
        .map_or(0, |i| i + 1);
    lines.splice(at..at, header);
    let dir = path.parent().unwrap_or(Path::new("."));
    let in_subdir = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| Class::ALL.iter().any(|c| c.subdir() == Some(n)));
    let base = if in_subdir {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let new_dir = match rep.class.and_then(Class::subdir) {
        Some(sub) => base.join(sub),
        None => base.to_path_buf(),
    };
    fs::create_dir_all(&new_dir)?;
    let new_path = new_dir.join(path.file_name().unwrap_or_default());
    let (old_shown, new_shown) = (path.display().to_string(), new_path.display().to_string());
    let mut out = String::new();
    for l in &lines {
        if l.starts_with("# reproduce:") {
            out.push_str(&l.replace(&old_shown, &new_shown));
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    write_atomic(&new_path, &out)?;
    let old_scripts = reproducers_of(path);
    for old in reproducers_of(&new_path) {
        let _ = fs::remove_file(old);
    }
    if let Some(script) = &rep.reproducer {
        write_script(&new_path, script)?;
    }
    if new_path != path {
        fs::remove_file(path)?;
        for old in old_scripts {
            let _ = fs::remove_file(old);
        }
    }
    Ok(new_path)
}

//! The benchmark's CSV files (results.csv and the peers' files of bench/peers.py), in both of its
//! forms (1D and grid): comma-separated, one header line, `#` comments, empty fields for values
//! a row does not have.

use std::path::Path;
use std::str::FromStr;

use crate::common::{fail, Result};

/// Writes `columns` as the header, then one line per row of fields.
pub fn write(path: &Path, columns: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Result<()> {
    let mut text = columns.join(",");
    text.push('\n');
    for fields in rows {
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| fail(format!("writing {}: {e}", path.display())))
}

/// Reads `path`, which must have the columns `needed` (others, in any order, may be missing:
/// their fields read as empty), and makes one value per line with `parse`.
pub fn read<R>(path: &Path, needed: &[&str], parse: impl Fn(&Record) -> Result<R>) -> Result<Vec<R>> {
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("reading {}: {e}", path.display())))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((_, header)) = lines.next() else {
        return Err(fail(format!("{}: empty, expected a header line", path.display())));
    };
    let header: Vec<&str> = header.split(',').map(str::trim).collect();
    for column in needed {
        if !header.contains(column) {
            return Err(fail(format!("{}: the header has no column `{column}`", path.display())));
        }
    }
    lines
        .map(|(i, line)| {
            let at = format!("{}:{}", path.display(), i + 1);
            let values: Vec<&str> = line.split(',').map(str::trim).collect();
            if values.len() != header.len() {
                return Err(fail(format!("{at}: {} fields, the header has {}", values.len(), header.len())));
            }
            parse(&Record { header: &header, values, at })
        })
        .collect()
}

/// One line of a CSV file, its fields looked up by column name.
pub struct Record<'a> {
    header: &'a [&'a str],
    values: Vec<&'a str>,
    /// `file:line`, for errors.
    at: String,
}

impl Record<'_> {
    /// The field of `column`, empty if the file has no such column.
    pub fn text(&self, column: &str) -> &str {
        self.header.iter().position(|h| *h == column).map_or("", |i| self.values[i])
    }

    /// The field of `column` parsed, `None` if it is empty.
    pub fn opt<T: FromStr>(&self, column: &str) -> Result<Option<T>>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.text(column);
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(|e| fail(format!("{}: column {column}: `{text}`: {e}", self.at)))
    }

    /// The field of `column` parsed; an error if it is empty.
    pub fn required<T: FromStr>(&self, column: &str) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        self.opt(column)?.ok_or_else(|| fail(format!("{}: column {column} is empty", self.at)))
    }
}

/// An optional value as a field: empty for `None`.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// An optional real as a field with `digits` decimals: empty for `None`.
pub fn real(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

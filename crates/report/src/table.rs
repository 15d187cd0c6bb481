//! Tables for people: a header and rows of text cells, printed aligned in a terminal, or
//! as CSV or Markdown for docs. A paper table (the paper's numbers beside ours) is a
//! `Table` whose producer formats the numbers; this module only lays them out.

use std::fmt::Write as _;

use crate::records::csv_line;

/// A header and rows of cells already formatted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names and no rows.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = S>) -> Self {
        Table {
            columns: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row; it should have one cell per column (a shorter row leaves its last
    /// columns blank, cells past the last column are not shown).
    pub fn push_row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let row: Vec<String> = cells.into_iter().map(Into::into).collect();
        debug_assert_eq!(row.len(), self.columns.len(), "a row of {row:?}");
        self.rows.push(row);
    }

    /// The column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The rows.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// The cell at `row`, `column` (None past the end).
    pub fn cell(&self, row: usize, column: usize) -> Option<&str> {
        self.rows.get(row)?.get(column).map(String::as_str)
    }

    /// Aligned plain text: the first column left-aligned, the others right-aligned (they
    /// hold numbers), columns two spaces apart, no trailing spaces.
    pub fn to_text(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        for cells in std::iter::once(&self.columns).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i == 0 {
                    let _ = write!(line, "{cell:<w$}");
                } else {
                    let _ = write!(line, "  {cell:>w$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// CSV with a header line.
    pub fn to_csv(&self) -> String {
        std::iter::once(&self.columns)
            .chain(&self.rows)
            .map(|cells| csv_line(cells))
            .collect()
    }

    /// A Markdown (GitHub) table, aligned as in [`Table::to_text`]; `|` in a cell is
    /// escaped.
    pub fn to_markdown(&self) -> String {
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for i in 0..self.columns.len() {
                let cell = cells.get(i).map_or("", String::as_str);
                let _ = write!(s, " {} |", cell.replace('|', "\\|"));
            }
            s.push('\n');
            s
        };
        let mut out = line(&self.columns);
        out.push('|');
        for i in 0..self.columns.len() {
            out.push_str(if i == 0 { ":---|" } else { "---:|" });
        }
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        widths
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["pattern", "paper", "ours"]);
        t.push_row(["lw1", "127.3", "127.0"]);
        t.push_row(["seg, 1/4", "6.9", "7"]);
        t
    }

    #[test]
    fn text_aligns_the_first_column_left_and_numbers_right() {
        assert_eq!(
            sample().to_text(),
            "pattern   paper   ours\nlw1       127.3  127.0\nseg, 1/4    6.9      7\n"
        );
        let mut t = Table::new(["a", "bb"]);
        t.push_row(["long", "1"]);
        assert_eq!(t.to_text(), "a     bb\nlong   1\n");
        assert_eq!(Table::new(["only"]).to_text(), "only\n");
    }

    #[test]
    fn csv_and_markdown() {
        assert_eq!(
            sample().to_csv(),
            "pattern,paper,ours\nlw1,127.3,127.0\n\"seg, 1/4\",6.9,7\n"
        );
        assert_eq!(
            sample().to_markdown(),
            "| pattern | paper | ours |\n|:---|---:|---:|\n| lw1 | 127.3 | 127.0 |\n| seg, 1/4 | 6.9 | 7 |\n"
        );
    }

    #[test]
    fn accessors() {
        let t = sample();
        assert_eq!(t.columns().len(), 3);
        assert_eq!(t.rows().len(), 2);
        assert_eq!(t.cell(1, 0), Some("seg, 1/4"));
        assert_eq!(t.cell(2, 0), None);
    }
}

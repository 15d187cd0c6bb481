//! Writing result files by the one rule every bufcache output follows (`trace::Output`):
//! a regular file or a new path is written atomically — the old file or the complete new
//! one, never half of either, whatever fails in between — `-` is standard output, and a
//! FIFO or a device is written through.

use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::figure::{Figure, FigureFile};
use crate::svg::render_svg;

/// Write `bytes` to `path`: through a temporary file in the same folder, synced and then
/// renamed over `path` (on any error the temporary file is removed and `path` is as it
/// was); `-` is standard output, and a FIFO or a device is written in place, as
/// [`trace::write_output`] does for every output of the project.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    trace::write_output(path, bytes).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Render `figure` and write it to `path` atomically. Nothing is written when the figure
/// cannot be drawn.
pub fn write_svg(path: &Path, figure: &Figure) -> Result<(), ReportError> {
    write_atomic(path, render_svg(figure)?.as_bytes())
}

impl FigureFile {
    /// Render the figure and write it as `dir/file_name`; returns that path.
    pub fn write_into(&self, dir: &Path) -> Result<PathBuf, ReportError> {
        let path = dir.join(&self.file_name);
        write_svg(&path, &self.figure)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Series};

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        write_atomic(&path, b"a long first version\n").unwrap();
        write_atomic(&path, b"short\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short\n");
        assert_eq!(names(dir.path()), ["out.csv"]);
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file_and_the_destination_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty folder where the file should go: the rename must fail.
        let path = dir.path().join("fig.svg");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), b"x").unwrap();
        let e = write_atomic(&path, b"<svg/>").unwrap_err();
        assert!(matches!(e, ReportError::Write { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with(&format!("writing {}", path.display())));
        assert_eq!(names(dir.path()), ["fig.svg"]);
        assert_eq!(names(&path), ["keep"]);
    }

    #[test]
    fn a_missing_folder_or_a_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(&dir.path().join("no/such/dir/f.csv"), b"x").unwrap_err();
        assert!(matches!(e, ReportError::Write { .. }));
        assert!(matches!(
            write_atomic(dir.path(), b"x"),
            Err(ReportError::Write { .. })
        ));
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_figure_that_cannot_be_drawn_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let bad = FigureFile::new(
            "bad.svg",
            crate::Figure::new("bad", Axis::new("x").log(), Axis::new("y"))
                .with_series(Series::line("s", vec![(0.0, 1.0)])),
        );
        assert!(matches!(
            bad.write_into(dir.path()),
            Err(ReportError::NonPositiveOnLogAxis { .. })
        ));
        assert!(names(dir.path()).is_empty());
        let good = FigureFile::new(
            "good.svg",
            crate::Figure::new("good", Axis::new("x"), Axis::new("y"))
                .with_series(Series::line("s", vec![(0.0, 1.0), (1.0, 2.0)])),
        );
        let path = good.write_into(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("good.svg"));
        assert!(std::fs::read_to_string(path).unwrap().starts_with("<svg"));
    }
}

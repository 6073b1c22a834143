//! Forwarding a rank's stdout or stderr line by line, so lines of different ranks never
//! interleave within a line, optionally tagged `[RANK] `.

use std::io::Write;

/// A line longer than this is passed on in pieces of this size (each ended by a newline
/// when tagging), so a rank printing without newlines cannot grow mpirun's memory.
pub const MAX_HELD_LINE: usize = 64 * 1024;

#[derive(Debug)]
pub struct LineForwarder {
    tag: Option<String>,
    held: Vec<u8>,
}

impl LineForwarder {
    pub fn new(rank: usize, tag_output: bool) -> LineForwarder {
        LineForwarder {
            tag: tag_output.then(|| format!("[{rank}] ")),
            held: Vec::new(),
        }
    }

    fn emit(&self, line: &[u8], newline: bool, out: &mut Vec<u8>) {
        if let Some(t) = &self.tag {
            out.extend_from_slice(t.as_bytes());
        }
        out.extend_from_slice(line);
        if newline {
            out.push(b'\n');
        }
    }

    /// Takes bytes read from the rank and writes every complete line to `sink` at once.
    pub fn push(&mut self, bytes: &[u8], sink: &mut impl Write) -> std::io::Result<()> {
        self.held.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(i) = self.held[start..].iter().position(|&b| b == b'\n') {
            self.emit(&self.held[start..start + i], true, &mut out);
            start += i + 1;
        }
        while self.held.len() - start >= MAX_HELD_LINE {
            self.emit(
                &self.held[start..start + MAX_HELD_LINE],
                self.tag.is_some(),
                &mut out,
            );
            start += MAX_HELD_LINE;
        }
        self.held.drain(..start);
        Self::write(sink, &out)
    }

    /// The stream ended: passes on an unfinished last line (ended by a newline when
    /// tagging, so the next tag starts a line).
    pub fn finish(&mut self, sink: &mut impl Write) -> std::io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut out = Vec::new();
        self.emit(&self.held, self.tag.is_some(), &mut out);
        self.held.clear();
        Self::write(sink, &out)
    }

    fn write(sink: &mut impl Write, out: &[u8]) -> std::io::Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        sink.write_all(out)?;
        sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_partial_lines_until_complete() {
        let mut f = LineForwarder::new(3, true);
        let mut sink = Vec::new();
        f.push(b"hel", &mut sink).unwrap();
        assert!(sink.is_empty());
        f.push(b"lo\nwor", &mut sink).unwrap();
        assert_eq!(sink, b"[3] hello\n");
        f.push(b"ld\n\n", &mut sink).unwrap();
        assert_eq!(sink, b"[3] hello\n[3] world\n[3] \n");
        f.push(b"tail", &mut sink).unwrap();
        f.finish(&mut sink).unwrap();
        assert!(sink.ends_with(b"[3] tail\n"));
    }

    #[test]
    fn untagged_output_is_passed_unchanged() {
        let mut f = LineForwarder::new(0, false);
        let mut sink = Vec::new();
        f.push(b"a\nb", &mut sink).unwrap();
        f.finish(&mut sink).unwrap();
        assert_eq!(sink, b"a\nb");
    }

    #[test]
    fn endless_lines_are_cut() {
        let mut f = LineForwarder::new(1, true);
        let mut sink = Vec::new();
        f.push(&vec![b'x'; MAX_HELD_LINE * 2 + 5], &mut sink)
            .unwrap();
        assert_eq!(sink.len(), 2 * (4 + MAX_HELD_LINE + 1));
        assert_eq!(f.held.len(), 5);
    }
}

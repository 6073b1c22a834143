//! Scatter across sites: the root sends every other site's blocks to that site's
//! leader in one message, in eager pieces (the data crosses once per remote site), and
//! straight to the members of its own site; leaders hand each member its block. Needs
//! every block's length on every member (`MPI_Scatter`: all equal).

use crate::coll::levels::{layout, recv_pieces, send_pieces, Split};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `cut`: `t` cut by site with the root first in its part; `lens[i]`: member i's bytes;
/// `blocks` (root only): member i's data; `mine`: where this member's block goes
/// (`None`: in place at the root).
pub fn build(
    s: &mut Sched,
    t: Team,
    cut: &Split,
    root: usize,
    blocks: &[Span],
    mine: Option<Span>,
    lens: &[usize],
) {
    let part = cut.part_team();
    let leads_root_site = cut.parts[cut.my_part][0] == root;
    if t.me == root {
        for p in cut.parts.iter().filter(|p| p[0] != root) {
            let whole = s.temp(p.iter().map(|&m| lens[m]).sum());
            for (m, span) in p.iter().zip(layout(whole, p, lens)) {
                s.copy(blocks[*m], span);
            }
            send_pieces(s, t.peer(p[0]), whole, cut.piece, 0);
        }
        for (k, &m) in cut.parts[cut.my_part].iter().enumerate().skip(1) {
            s.send(part.peer(k), blocks[m]);
        }
        if let Some(own) = mine {
            s.copy(blocks[root], own);
        }
    } else if leads_root_site || !cut.is_leader() {
        s.recv(
            part.peer(0),
            mine.expect("a member other than the root gets data"),
        );
    } else {
        let p = &cut.parts[cut.my_part];
        let whole = s.temp(p.iter().map(|&m| lens[m]).sum());
        let spans = layout(whole, p, lens);
        recv_pieces(s, t.peer(root), whole, cut.piece, 0);
        s.wait();
        for (k, &span) in spans.iter().enumerate().skip(1) {
            s.send(part.peer(k), span);
        }
        s.copy(spans[0], mine.expect("a leader gets data"));
    }
    s.wait();
}

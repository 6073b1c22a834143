//! Gather across sites: inside the root's site members send straight to the root; in
//! every other site they send to the site's leader, which forwards the site's blocks
//! to the root in one message (in eager pieces), so the data crosses once per remote
//! site. Needs every
//! block's length on every member (`MPI_Gather`: all equal).

use crate::coll::levels::{layout, recv_pieces, send_pieces, Split};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `cut`: `t` cut by site with the root first in its part; `lens[i]`: member i's bytes;
/// `mine`: this member's data (`None`: in place at the root); `blocks` (root only):
/// where member i's data goes.
pub fn build(
    s: &mut Sched,
    t: Team,
    cut: &Split,
    root: usize,
    mine: Option<Span>,
    blocks: &[Span],
    lens: &[usize],
) {
    let part = cut.part_team();
    let leads_root_site = cut.parts[cut.my_part][0] == root;
    if t.me == root {
        for (k, &m) in cut.parts[cut.my_part].iter().enumerate().skip(1) {
            s.recv(part.peer(k), blocks[m]);
        }
        if let Some(own) = mine {
            s.copy(own, blocks[root]);
        }
        let mut staged = Vec::new();
        for p in cut.parts.iter().filter(|p| p[0] != root) {
            let whole = s.temp(p.iter().map(|&m| lens[m]).sum());
            recv_pieces(s, t.peer(p[0]), whole, cut.piece, 0);
            staged.push((p, whole));
        }
        s.wait();
        for (p, whole) in staged {
            for (m, span) in p.iter().zip(layout(whole, p, lens)) {
                s.copy(span, blocks[*m]);
            }
        }
    } else if leads_root_site || !cut.is_leader() {
        let own = mine.expect("a member other than the root has data");
        s.send(part.peer(0), own);
    } else {
        let p = &cut.parts[cut.my_part];
        let whole = s.temp(p.iter().map(|&m| lens[m]).sum());
        let spans = layout(whole, p, lens);
        s.copy(mine.expect("a leader has data"), spans[0]);
        for (k, &span) in spans.iter().enumerate().skip(1) {
            s.recv(part.peer(k), span);
        }
        s.wait();
        send_pieces(s, t.peer(root), whole, cut.piece, 0);
    }
    s.wait();
}

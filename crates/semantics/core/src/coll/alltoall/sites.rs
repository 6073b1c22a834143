//! All-to-all across sites with one aggregated message each way between every pair of
//! sites: members exchange directly inside their site; the blocks leaving a site travel
//! to its leader in one message per member, cross as one message per destination site
//! (leader to leader, in eager pieces), and the destination leader scatters them to its members, one
//! message each. Three short rounds inside sites buy one wide-area latency instead of
//! n-1 crossings per member. Needs equal blocks (`MPI_Alltoall`): every member knows
//! every block's size.

use crate::coll::levels::{recv_pieces, send_pieces, Split};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// Sub-tag of the aggregated messages between a member and its leader (apart from the
/// direct block the same pair exchanges).
const AGGREGATE: i32 = 1;

/// `out[i]`: data for member i; `into[i]`: data from member i; `cut`: `t` cut by site.
pub fn build(s: &mut Sched, t: Team, cut: &Split, out: &[Span], into: &[Span]) {
    let b = out[t.me].len;
    let parts = &cut.parts;
    let mine = &parts[cut.my_part];
    // Inside the site: direct exchange.
    s.copy(out[t.me], into[t.me]);
    for &j in mine.iter().filter(|&&j| j != t.me) {
        s.recv(t.peer(j), into[j]);
        s.send(t.peer(j), out[j]);
    }
    // Members outside this site, in leader order then rank order.
    let remote: Vec<usize> = parts
        .iter()
        .enumerate()
        .filter(|&(q, _)| q != cut.my_part)
        .flat_map(|(_, p)| p.iter().copied())
        .collect();
    let part = cut.part_team();
    if !cut.is_leader() {
        let leaving = s.temp(b * remote.len());
        for (k, &j) in remote.iter().enumerate() {
            s.copy(out[j], leaving.block(k, b));
        }
        let arriving = s.temp(b * remote.len());
        s.send_tagged(part.peer(0), leaving, AGGREGATE);
        s.recv_tagged(part.peer(0), arriving, AGGREGATE);
        s.wait();
        for (k, &i) in remote.iter().enumerate() {
            s.copy(arriving.block(k, b), into[i]);
        }
        s.wait();
        return;
    }
    // The leader: what each member of this site sends out, in `remote` order.
    let leaving: Vec<Span> = (0..mine.len())
        .map(|k| {
            if k == 0 {
                let own = s.temp(b * remote.len());
                for (x, &j) in remote.iter().enumerate() {
                    s.copy(out[j], own.block(x, b));
                }
                own
            } else {
                let from = s.temp(b * remote.len());
                s.recv_tagged(part.peer(k), from, AGGREGATE);
                from
            }
        })
        .collect();
    s.wait();
    // One message per other site: sender-major, then its members in order.
    let mut offset = 0; // of the site's blocks in a member's `leaving`
    let mut arrived = Vec::with_capacity(parts.len());
    for (q, p) in parts.iter().enumerate() {
        if q == cut.my_part {
            arrived.push(None);
            continue;
        }
        let to_site = s.temp(b * mine.len() * p.len());
        for (k, l) in leaving.iter().enumerate() {
            s.copy(
                l.sub(offset * b, p.len() * b),
                to_site.block(k, p.len() * b),
            );
        }
        offset += p.len();
        let from_site = s.temp(b * p.len() * mine.len());
        send_pieces(s, t.peer(p[0]), to_site, cut.piece, 0);
        recv_pieces(s, t.peer(p[0]), from_site, cut.piece, 0);
        arrived.push(Some(from_site));
    }
    s.wait();
    // Block (sender i of site q, member k here) is block i * |here| + k of q's message;
    // the leader's own go straight to `into`, the others' into one message each.
    for k in 0..mine.len() {
        let packed = (k > 0).then(|| s.temp(b * remote.len()));
        let mut x = 0;
        for (p, from) in parts.iter().zip(&arrived) {
            let Some(from) = from else { continue };
            for i in 0..p.len() {
                let dest = packed.map_or(into[p[i]], |all| all.block(x, b));
                s.copy(from.block(i * mine.len() + k, b), dest);
                x += 1;
            }
        }
        if let Some(all) = packed {
            s.send_tagged(part.peer(k), all, AGGREGATE);
        }
    }
    s.wait();
}

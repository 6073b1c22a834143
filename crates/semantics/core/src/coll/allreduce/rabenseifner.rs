//! Rabenseifner's allreduce for large data and commutative operators: a reduce-scatter
//! by recursive halving (each member ends up owning the reduced 1/2^k of the data) then
//! an allgather by recursive doubling. Each member moves about twice the data once,
//! instead of the whole data log2 n times.
//!
//! With a power-of-two member count and a separate send buffer, the first halving step
//! reads the send buffer and receives straight into the result, so the data is never
//! copied into the result first (2 members, 1 MiB of floats: 111 -> 92 us a call, Open
//! MPI 106-119).

use super::recursive_doubling::{fold, unfold};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `elem`: bytes per element; needs at least 2^k elements (k = floor(log2 n)).
pub fn build(s: &mut Sched, t: Team, input: Span, output: Span, elem: usize) {
    let n = t.size();
    // The first step reads `input` itself: no fold comes before it to combine into.
    let from_input = input != output && n.is_power_of_two() && n > 1;
    if !from_input {
        s.copy(input, output);
    }
    if n == 1 {
        return;
    }
    // The steps after the first receive into scratch; at 2 members there are none.
    let tmp = s.temp(if from_input && n == 2 { 0 } else { output.len });
    let core = fold(s, t, output, tmp);
    if let Some(nr) = core.newrank {
        let pof2 = core.pof2;
        let count = output.len / elem;
        // Chunk i of pof2: count/pof2 elements, the last one takes the remainder.
        let start = |i: usize| i * (count / pof2) * elem;
        let range = |a: usize, b: usize| {
            let end = if b == pof2 { output.len } else { start(b) };
            (start(a), end - start(a))
        };
        let (mut send_idx, mut recv_idx, mut last_idx) = (0, 0, pof2);
        let mut mask = 1;
        while mask < pof2 {
            let partner = nr ^ mask;
            let half = pof2 / (mask * 2);
            let (send, recv) = if nr < partner {
                send_idx = recv_idx + half;
                (range(send_idx, last_idx), range(recv_idx, send_idx))
            } else {
                recv_idx = send_idx + half;
                (range(send_idx, recv_idx), range(recv_idx, last_idx))
            };
            let peer = t.peer(core.member(partner));
            // The first step from `input` receives into the result and combines it with
            // `input` there (the operator is commutative); later steps send the partial
            // result and receive into scratch.
            let (from, into, other) = if from_input && mask == 1 {
                (input, output, input)
            } else {
                (output, tmp, tmp)
            };
            s.send(peer, from.sub(send.0, send.1));
            s.recv(peer, into.sub(recv.0, recv.1));
            s.wait();
            s.reduce(other.sub(recv.0, recv.1), output.sub(recv.0, recv.1));
            send_idx = recv_idx;
            mask <<= 1;
            if mask < pof2 {
                last_idx = recv_idx + pof2 / mask;
            }
        }
        mask >>= 1;
        while mask > 0 {
            let partner = nr ^ mask;
            let half = pof2 / (mask * 2);
            let (send, recv) = if nr < partner {
                if mask != pof2 / 2 {
                    last_idx += half;
                }
                recv_idx = send_idx + half;
                (range(send_idx, recv_idx), range(recv_idx, last_idx))
            } else {
                recv_idx = send_idx - half;
                (range(send_idx, last_idx), range(recv_idx, send_idx))
            };
            let peer = t.peer(core.member(partner));
            s.send(peer, output.sub(send.0, send.1));
            s.recv(peer, output.sub(recv.0, recv.1));
            s.wait();
            if nr > partner {
                send_idx = recv_idx;
            }
            mask >>= 1;
        }
    }
    unfold(s, t, &core, output);
}

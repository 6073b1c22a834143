//! The startup phase as two state machines: [`client::Client`] (one per IMPI client,
//! drives authentication, rank registration, every label and DONE) and
//! [`server::Server`] (the IMPI server: collects each label from all clients and replies
//! to all). Both take received bytes and hand out bytes to send; neither touches a socket.

pub mod client;
pub mod server;

/// Received bytes not yet decoded. Decoders check a message's length bound from its
/// header before its payload is waited for, so this holds at most one bounded message
/// plus whatever one read returned.
#[derive(Debug, Default)]
struct Inbox {
    bytes: Vec<u8>,
}

impl Inbox {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
    }

    fn consume(&mut self, n: usize) {
        self.bytes.drain(..n.min(self.bytes.len()));
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests;

//! The PMI-1 ("simple PMI") wire protocol.

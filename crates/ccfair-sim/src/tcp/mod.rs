//! The TCP model: sender (SACK, RACK, PRR, RTO, pacing, delivery-rate
//! samples), receiver (delayed ACKs, receive window) and RTT estimation.

pub mod receiver;
pub mod rtt;
pub mod sender;

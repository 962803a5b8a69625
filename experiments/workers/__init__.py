"""Every cell exactly once: the claim protocol (a lease with fencing), the fence a worker hands to training, the
long-lived worker's claim loop, progress read from the store, and the link to the live report process."""

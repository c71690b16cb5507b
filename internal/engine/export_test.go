package engine

// QueuedRequests is how many requests wait for the writer: a test that
// must put requests into one group commit holds the writer in the backend
// and waits for them to queue.
func (e *Engine) QueuedRequests() int { return len(e.jobs) }

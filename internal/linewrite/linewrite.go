// Package linewrite writes whole messages from many goroutines to one
// stream (a stdio pipe carrying newline-delimited JSON-RPC: the stdio
// front's stdout, an upstream's stdin), coalescing the messages that
// arrive while a write is in flight into the next write.
//
// A Write when no write is in flight writes its message at once, on the
// caller's goroutine, with no copy: one caller at a time (one call in
// flight) costs what a mutex around the stream cost. A Write while
// another is in flight appends its message to a queue and returns at
// once; the goroutine in flight writes the whole queue in one system call
// when its own write returns, and again until the queue is empty. With
// many calls in flight the answers that finish together go out in one
// write(2) instead of one each, and no writer waits for another's system
// call (the mutex made each wait, then woke it: a futex wake and often an
// idle processor's wake-up per message).
//
// Order: messages are written in the order their Writes took the lock, as
// with a mutex; so the messages one goroutine writes one after another
// (a call's progress notifications, then its answer) keep their order.
// Messages are never split or interleaved.
//
// Errors: a Write that wrote its own message returns that write's result.
// A queued message's Write returns nil before it is written; if a later
// write fails, the error is kept and every later Write (and Flush) returns
// it without writing. A stream whose write failed is broken for good (a
// closed pipe: the peer went away).
//
// Before the stream is closed or the process ends, Flush waits until
// nothing is queued or in flight, so that a message whose Write already
// returned is not lost.
package linewrite

import (
	"io"
	"sync"
)

// maxQueue bounds the bytes queued behind a write in flight: past it a
// Write waits until the queue is written, as it waited for the mutex
// before (a client that stops reading holds its writers, not a growing
// queue).
const maxQueue = 4 << 20

// maxSpare is the largest queue buffer kept for the next batch (bytes);
// a larger one (a batch holding a big message) is dropped once written.
const maxSpare = 1 << 20

// Writer is a coalescing writer (see the package comment). Make one with
// New.
type Writer struct {
	w io.Writer

	mu    sync.Mutex
	busy  bool   // a goroutine is writing (the leader)
	queue []byte // messages written while busy, in order
	spare []byte // the last batch's buffer, for the next queue
	err   error  // the first write error; sticky
	idle  sync.Cond

	writes, batched uint64 // writes to w, and messages that went in a batch (Stats)
}

// New returns a Writer over w.
func New(w io.Writer) *Writer {
	l := &Writer{w: w}
	l.idle.L = &l.mu
	return l
}

// Write writes p, one whole message, to the stream: at once when no write
// is in flight, else in the in-flight writer's next batch (p is copied
// and Write returns len(p), nil; with maxQueue bytes queued already it
// first waits until they are written). Once a write to the stream failed,
// every Write returns that error and writes nothing.
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	for l.busy && len(l.queue) >= maxQueue && l.err == nil {
		l.idle.Wait()
	}
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return 0, err
	}
	if l.busy {
		l.queue = append(l.queue, p...)
		l.batched++
		l.mu.Unlock()
		return len(p), nil
	}
	l.busy = true
	l.writes++
	l.mu.Unlock()
	n, err := l.w.Write(p)
	werr := err
	var batch []byte
	for {
		l.mu.Lock()
		if cap(batch) > 0 && cap(batch) <= maxSpare {
			l.spare = batch[:0] // the next queue's buffer
		}
		if werr != nil && l.err == nil {
			l.err = werr
		}
		if len(l.queue) == 0 || l.err != nil {
			l.queue = l.queue[:0] // after an error: dropped, the stream is broken
			l.busy = false
			l.idle.Broadcast()
			l.mu.Unlock()
			return n, err
		}
		batch = l.queue
		l.queue, l.spare = l.spare, nil
		if len(batch) >= maxQueue {
			l.idle.Broadcast() // writers waiting for room (Write)
		}
		l.writes++
		l.mu.Unlock()
		_, werr = l.w.Write(batch)
	}
}

// Flush waits until every message written so far is on the stream (or
// the stream failed) and returns the stream's error.
func (l *Writer) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy {
		l.idle.Wait()
	}
	return l.err
}

// Close flushes the writer, then closes the stream when it is an
// io.Closer.
func (l *Writer) Close() error {
	ferr := l.Flush()
	if c, ok := l.w.(io.Closer); ok {
		if err := c.Close(); err != nil {
			return err
		}
	}
	return ferr
}

// Stats returns how many writes reached the stream and how many messages
// went out in a batch with others (tests, measurements).
func (l *Writer) Stats() (writes, batched uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes, l.batched
}

package statestore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// DefaultTimeout bounds one operation on a shared store: past it the
// operation fails (ErrUnavailable) and its caller fails closed.
const DefaultTimeout = time.Second

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// URL is redis://[[user]:password@]host[:port][/db] (rediss:// for
	// TLS; valkey:// and valkeys:// are the same).
	URL string
	// CAFile is a PEM file of the certificate authorities a rediss://
	// server's certificate must chain to (default: the system's).
	CAFile string
	// Timeout bounds one operation (default DefaultTimeout).
	Timeout time.Duration
	// OnError, when set, is told of every operation that failed to reach
	// the store (op: "GET", "rate-limit script", …), for a metric.
	OnError func(op string)
}

// Redis is a Store in a Redis-protocol server (Redis >= 6.2 or Valkey,
// one primary: not Redis Cluster), through github.com/valkey-io/valkey-go.
// Connections are made when needed: a server that is down at start or
// goes away later makes operations fail with ErrUnavailable until it is
// back, with no restart.
type Redis struct {
	c       valkey.Client
	where   string // host:port/db, for messages (never the password)
	timeout time.Duration
	onError func(op string)
	gcra    *valkey.Lua
	acquire *valkey.Lua
}

// OpenRedis builds a Redis store. It does not need the server to be up.
// Errors: a URL that is not a Redis URL, a CA file that cannot be read.
func OpenRedis(o RedisOptions) (*Redis, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", redactURLError(err))
	}
	switch u.Scheme {
	case "redis", "rediss", "valkey", "valkeys":
	default:
		return nil, fmt.Errorf("scheme %q: want redis:// or rediss:// (TLS)", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("no host: want redis://HOST:PORT/DB")
	}
	opt, err := valkey.ParseURL(o.URL)
	if err != nil {
		return nil, redactURLError(err)
	}
	if o.CAFile != "" {
		if opt.TLSConfig == nil {
			return nil, errors.New("a CA file is given but the URL is not rediss:// (TLS)")
		}
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", o.CAFile)
		}
		opt.TLSConfig.RootCAs = pool
	}
	if opt.TLSConfig != nil && opt.TLSConfig.MinVersion < tls.VersionTLS12 {
		opt.TLSConfig.MinVersion = tls.VersionTLS12
	}
	r := &Redis{where: opt.InitAddress[0] + "/" + strconv.Itoa(opt.SelectDB), timeout: o.Timeout, onError: o.OnError, gcra: valkey.NewLuaScript(gcraScript), acquire: valkey.NewLuaScript(acquireScript)}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	// One primary over one connection (concurrent commands are pipelined
	// on it: a restarted server costs one failed attempt, retried); no
	// client-side cache (replicas must see each other's writes at once);
	// dial within the operation timeout.
	opt.ForceSingleClient = true
	opt.PipelineMultiplex = -1 // one connection, commands pipelined on it
	opt.DisableCache = true
	opt.Dialer.Timeout = r.timeout
	opt.ConnWriteTimeout = r.timeout
	c, err := valkey.NewClient(opt)
	if c == nil {
		return nil, fmt.Errorf("%s: %v", r.where, err)
	}
	r.c = c // a dial error is not fatal: the next operation dials again
	return r, nil
}

// redactURLError drops the URL (with its password) from a parse error.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (r *Redis) Shared() bool { return true }

func (r *Redis) Close() error {
	r.c.Close()
	return nil
}

// Where is the store's host:port/db, for logs.
func (r *Redis) Where() string { return r.where }

func (r *Redis) fail(op string, err error) error {
	if r.onError != nil {
		r.onError(op)
	}
	return fmt.Errorf("%w: %s at %s: %v", ErrUnavailable, op, r.where, err)
}

func (r *Redis) do(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResult {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res := r.c.Do(ctx, cmd)
	if retryable(ctx, res.Error()) {
		res = r.c.Do(ctx, cmd) // a failed command is not recycled: it can be sent again
	}
	return res
}

// retryable reports whether err is a connection found dead (the server
// restarted since the last operation): the client dials again on the
// next attempt, so one more is made. A command whose answer was lost
// after the server ran it may so run twice; every use of the store
// errs on the safe side then (a bucket charged twice, a one-time mark
// found taken, a link found used): it fails closed.
func retryable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || valkey.IsValkeyNil(err) {
		return false
	}
	_, answered := valkey.IsValkeyErr(err)
	return !answered
}

// Ping checks that the server answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.do(ctx, r.c.B().Ping().Build()).Error(); err != nil {
		return r.fail("PING", err)
	}
	return nil
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.do(ctx, r.c.B().Get().Key(Prefix+key).Build()).AsBytes()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, r.fail("GET", err)
	}
	return b, nil
}

func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	set := r.c.B().Set().Key(Prefix + key).Value(valkey.BinaryString(val))
	var cmd valkey.Completed
	if ttl > 0 {
		cmd = set.Px(ttl).Build()
	} else {
		cmd = set.Build()
	}
	if err := r.do(ctx, cmd).Error(); err != nil {
		return r.fail("SET", err)
	}
	return nil
}

func (r *Redis) SetNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	set := r.c.B().Set().Key(Prefix + key).Value(valkey.BinaryString(val)).Nx()
	var cmd valkey.Completed
	if ttl > 0 {
		cmd = set.Px(ttl).Build()
	} else {
		cmd = set.Build()
	}
	err := r.do(ctx, cmd).Error()
	if valkey.IsValkeyNil(err) {
		return false, nil
	}
	if err != nil {
		return false, r.fail("SET NX", err)
	}
	return true, nil
}

func (r *Redis) Take(ctx context.Context, key string) ([]byte, error) {
	b, err := r.do(ctx, r.c.B().Getdel().Key(Prefix+key).Build()).AsBytes()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, r.fail("GETDEL", err)
	}
	return b, nil
}

func (r *Redis) Delete(ctx context.Context, key string) error {
	if err := r.do(ctx, r.c.B().Del().Key(Prefix+key).Build()).Error(); err != nil {
		return r.fail("DEL", err)
	}
	return nil
}

// gcraScript is Memory.Allow on the server, atomic across replicas, in
// one round trip for all of a call's buckets. KEYS are the buckets; ARGV
// holds each one's interval and tolerance (microseconds). The clock is
// the server's (TIME), so replicas' clocks do not matter. Values are
// formatted with %.0f: Lua's tostring would print 1.7e+15.
const gcraScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2*i-1])
  local tolerance = tonumber(ARGV[2*i])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  local nxt = tat + interval
  if nxt - tolerance > now then
    return {i, string.format('%.0f', nxt - tolerance - now)}
  end
  tats[i] = nxt
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.0f', tats[i]), 'PX', math.floor((tats[i] - now) / 1000) + 1)
end
return {0, '0'}
`

func (r *Redis) Allow(ctx context.Context, buckets []Bucket) (Verdict, error) {
	keys := make([]string, len(buckets))
	args := make([]string, 0, 2*len(buckets))
	for i, b := range buckets {
		keys[i] = Prefix + b.Key
		interval, tolerance := b.params()
		args = append(args, strconv.FormatInt(interval, 10), strconv.FormatInt(tolerance, 10))
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res := r.gcra.Exec(ctx, r.c, keys, args)
	if retryable(ctx, res.Error()) {
		res = r.gcra.Exec(ctx, r.c, keys, args)
	}
	out, err := res.ToArray()
	if err != nil {
		return Verdict{}, r.fail("rate-limit script", err)
	}
	if len(out) != 2 {
		return Verdict{}, r.fail("rate-limit script", fmt.Errorf("answer of %d values, want 2", len(out)))
	}
	i, err1 := out[0].AsInt64()
	ws, err2 := out[1].ToString()
	wait, err3 := strconv.ParseInt(ws, 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Verdict{}, r.fail("rate-limit script", err)
	}
	return Verdict{Refused: int(i), RetryAfter: time.Duration(wait) * time.Microsecond}, nil
}

// acquireScript is Memory.Acquire on the server: each pool is a sorted
// set of holders scored by the expiry of their slot (milliseconds, the
// server's clock). ARGV: holder, ttl, then each pool's Max.
const acquireScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local holder, ttl = ARGV[1], tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if not redis.call('ZSCORE', KEYS[i], holder) and redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[2 + i]) then
    return i
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + ttl, holder)
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 0
`

func (r *Redis) Acquire(ctx context.Context, holder string, ttl time.Duration, pools []Pool) (int, error) {
	keys := make([]string, len(pools))
	args := []string{holder, strconv.FormatInt(max(ttl.Milliseconds(), 1), 10)}
	for i, p := range pools {
		keys[i] = Prefix + p.Key
		args = append(args, strconv.Itoa(p.Max))
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res := r.acquire.Exec(ctx, r.c, keys, args)
	if retryable(ctx, res.Error()) {
		res = r.acquire.Exec(ctx, r.c, keys, args)
	}
	n, err := res.AsInt64()
	if err != nil {
		return 0, r.fail("slot script", err)
	}
	return int(n), nil
}

func (r *Redis) Release(ctx context.Context, holder string, keys []string) error {
	cmds := make(valkey.Commands, 0, len(keys))
	for _, k := range keys {
		cmds = append(cmds, r.c.B().Zrem().Key(Prefix+k).Member(holder).Build())
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	for _, res := range r.c.DoMulti(ctx, cmds...) {
		if err := res.Error(); err != nil {
			return r.fail("ZREM", err)
		}
	}
	return nil
}

// A local stand-in for the Anthropic Messages API, for the SDK-path bench: its own process
// (the bench waits on each corral run synchronously), listening on 127.0.0.1, answering
// every `POST …/v1/messages` with the server-sent events the API streams (message_start,
// content_block_start, ping, content_block_delta with input_json_delta, content_block_stop,
// message_delta, message_stop).
//
// A run's script is in its base URL, so the stand-in never parses a request body:
//   ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/run/<id>/<steps>/<command>
// answers `steps` turns of one Bash call of COMMANDS[command], then a turn that ends with
// text (end_turn). `GET /stats/<id>` gives (and forgets) what the run's requests looked
// like: when the first arrived and when the last reply ended (on sharedClockMs of
// bench/lib.mjs, which the bench's own process reads alike), how many came, their body
// sizes, the gaps from each reply's end to the next request, and the stand-in's own time
// on each (its arrival to its reply's end: part of a step that is not corral's).
//
//   node bench/messages-standin.mjs      prints {"port": N} on its first line of stdout
import http from 'node:http';
import { sharedClockMs as now } from './lib.mjs';

/** Prints 1 MiB: 16,384 lines of 64 bytes. */
export const COMMANDS = {
  true: 'true',
  megabyte: 'yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY | head -c 1048576',
};

/** One run's requests, by the id in its base URL. */
const runs = new Map();

export function createStandin() {
  return http.createServer((req, res) => {
    const arrivedAt = now();
    const url = req.url ?? '/';
    const stats = /^\/stats\/([\w-]+)$/.exec(url);
    if (req.method === 'GET' && stats) {
      const run = runs.get(stats[1]);
      runs.delete(stats[1]);
      res.writeHead(run ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(run ? { firstRequestAt: run.firstRequestAt, lastReplyAt: run.repliedAt, requests: run.requests, bodyBytes: run.bodyBytes, gapsMs: run.gapsMs, serveMs: run.serveMs } : { error: 'no such run' }));
      return;
    }
    const match = /^\/run\/([\w-]+)\/(\d+)\/(\w+)\/v1\/messages(\?.*)?$/.exec(url);
    if (req.method !== 'POST' || !match || !(match[3] in COMMANDS)) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `stand-in: no route ${req.method} ${url}` } }));
      return;
    }
    const [, id, steps, command] = match;
    let run = runs.get(id);
    if (!run) {
      run = { firstRequestAt: arrivedAt, requests: 0, bodyBytes: [], gapsMs: [], serveMs: [], repliedAt: undefined };
      runs.set(id, run);
    }
    if (run.repliedAt !== undefined) run.gapsMs.push(arrivedAt - run.repliedAt);
    const turn = run.requests++;
    let bytes = 0;
    req.on('data', (chunk) => (bytes += chunk.length));
    req.on('end', () => {
      run.bodyBytes.push(bytes);
      stream(res, turn, turn < Number(steps) ? { command: COMMANDS[command] } : null, () => {
        run.repliedAt = now();
        run.serveMs.push(run.repliedAt - arrivedAt);
      });
    });
  });
}

/**
 * One streamed assistant message: a Bash call of `call.command`, or (null) a closing
 * text. `lastWrite` is called just before the reply's last bytes go to the socket: a time
 * stamped after them could fall after the client (another process) had read them.
 */
function stream(res, turn, call, lastWrite) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_bench_${turn}` });
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const usage = { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000 + turn * 40, service_tier: 'standard' };
  send('message_start', {
    type: 'message_start',
    message: { id: `msg_bench_${turn}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage },
  });
  if (call) {
    const input = JSON.stringify({ command: call.command, description: 'bench step' });
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_bench_${turn}`, name: 'Bash', input: {} } });
    send('ping', { type: 'ping' });
    // The API opens a tool's input with an empty partial_json, then sends it in pieces cut anywhere.
    const third = Math.ceil(input.length / 3);
    for (const partial_json of ['', input.slice(0, third), input.slice(third, 2 * third), input.slice(2 * third)]) {
      send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } });
    }
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    send('ping', { type: 'ping' });
    for (const text of ['Done', '.']) send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: call ? 40 : 3 } });
  lastWrite();
  send('message_stop', { type: 'message_stop' });
  res.end();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = createStandin();
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
  // Ends with the bench: its stdin is the bench's pipe.
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

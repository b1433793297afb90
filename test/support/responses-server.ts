// A local stand-in for the OpenAI Responses API, as Codex speaks it: it refuses the
// WebSocket Codex tries first (426), so Codex falls back to HTTP and server-sent events,
// and answers each POST /v1/responses with the next reply of its script. It records what
// it was sent, so tests can see what reached the model (the guard's reasons, the key).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One reply: a shell command (`exec_command`, Codex's tool) or a message. */
export type ResponsesReply = { command: string } | { text: string };

export interface ResponsesRequest {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ResponsesServer {
  /** The API base, `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: ResponsesRequest[];
  close(): Promise<void>;
}

export async function startResponsesServer(script: ResponsesReply[]): Promise<ResponsesServer> {
  const requests: ResponsesRequest[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') return void res.writeHead(426).end();
      requests.push({ headers: req.headers, body });
      const id = `resp_${requests.length}`;
      const reply = script[next++] ?? { text: 'Done.' };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event: { type: string; [field: string]: unknown }): void => void res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      send({ type: 'response.created', response: { id } });
      const item =
        'command' in reply
          ? { type: 'function_call', id: `fc_${requests.length}`, call_id: `call_${requests.length}`, name: 'exec_command', arguments: JSON.stringify({ cmd: reply.command }) }
          : { type: 'message', role: 'assistant', id: `msg_${requests.length}`, content: [{ type: 'output_text', text: reply.text }] };
      send({ type: 'response.output_item.done', item });
      send({ type: 'response.completed', response: { id, usage: { input_tokens: 5, input_tokens_details: null, output_tokens: 3, output_tokens_details: null, total_tokens: 8 } } });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON receiver gets it, flattened: its attributes beside its fields. */
export type ReceivedSpan = {
  name: string;
  service?: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  statusMessage?: string;
  events: { name: string; attributes: Record<string, unknown> }[];
} & Record<string, unknown>;

/** A minimal OTLP/HTTP (JSON) traces receiver on 127.0.0.1: what a collector would receive. */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body exactly as it arrived. */
  bodies: string[];
  close(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

const flat = (attrs: OtlpAttribute[] = []): Record<string, unknown> =>
  Object.fromEntries(attrs.map((a) => [a.key, Object.values(a.value)[0]] as [string, unknown]));

/** Starts the receiver on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const doc = JSON.parse(body) as {
          resourceSpans: {
            resource: { attributes: OtlpAttribute[] };
            scopeSpans: {
              spans: {
                name: string;
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                attributes: OtlpAttribute[];
                status?: { message?: string };
                events?: { name: string; attributes?: OtlpAttribute[] }[];
              }[];
            }[];
          }[];
        };
        for (const rs of doc.resourceSpans) {
          const service = flat(rs.resource.attributes)['service.name'] as string | undefined;
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans) {
              spans.push({
                ...flat(s.attributes),
                name: s.name,
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                statusMessage: s.status?.message,
                events: (s.events ?? []).map((e) => ({ name: e.name, attributes: flat(e.attributes) })),
              });
            }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  // Collectors keep idle connections open far longer than Node's 5 s default; with the default, a
  // worker whose event loop was busy can send on a socket the server just closed (ECONNRESET).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

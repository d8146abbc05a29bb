/**
 * A DNS front on loopback that holds every query a fixed time before passing it to a server behind
 * it, so that a client on loopback waits as it would for an answer from across the internet
 * (bench/scale.ts `--dns-latency-ms`: a worker's rate is then bound by its concurrency ÷ a check's
 * latency, not by the CPU). UDP and TCP on the same port, as a DNS server listens (RFC 1035 §4.2).
 *
 * UDP: each query's ID (RFC 1035 §4.1.1) is swapped for one of the front's own, so that the answers
 * of many clients, all coming back on the front's one socket to the server, find their way to the
 * client that asked; the client's ID is put back in the answer. TCP: one connection to the server per
 * client connection, the client's bytes held `latencyMs` and then written on, the answers piped back.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';

/** DNS message IDs are 16 bits (RFC 1035 §4.1.1); the front hands out 1 … 65,535 in turn. */
const MAX_MESSAGE_ID = 0xffff;
/** The DNS header is 12 octets (RFC 1035 §4.1.1): anything shorter is not a query and is dropped. */
const DNS_HEADER_OCTETS = 12;
/**
 * The receive buffer asked for each UDP socket, octets (as the embedded server's,
 * `SERVER_UDP_RECEIVE_BUFFER`): on a loaded machine the front can wait for a core while thousands of
 * datagrams arrive, and one dropped costs its client a 2 s timeout.
 */
const UDP_RECEIVE_BUFFER = 4 * 1024 * 1024;
/** How many ephemeral ports to try for a port free for both UDP and TCP. */
const PORT_ATTEMPTS = 20;

/** A running front. */
export interface DelayingDnsFront {
  port: number;
  /** Queries passed on so far, per transport. */
  stats(): { udp: number; tcp: number };
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (TCP and UDP, one port) and delays every query to `upstreamPort` by `latencyMs`. */
export async function startDelayingDnsFront(upstreamPort: number, latencyMs: number): Promise<DelayingDnsFront> {
  const counts = { udp: 0, tcp: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const later = (run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, latencyMs);
    timers.add(timer);
  };

  // UDP: the front's socket faces the clients; `back` faces the server.
  const back = createSocket({ type: 'udp4', recvBufferSize: UDP_RECEIVE_BUFFER });
  const asked = new Map<number, { id: number; rinfo: RemoteInfo }>();
  let nextId = 0;
  const onQuery = (query: Buffer, rinfo: RemoteInfo) => {
    if (query.length < DNS_HEADER_OCTETS) return;
    later(() => {
      nextId = (nextId % MAX_MESSAGE_ID) + 1;
      // An ID still waiting after 65,535 newer queries was lost upstream: it is overwritten.
      asked.set(nextId, { id: query.readUInt16BE(0), rinfo });
      query.writeUInt16BE(nextId, 0);
      counts.udp++;
      back.send(query, upstreamPort, '127.0.0.1');
    });
  };
  let front: Socket4 | undefined;
  back.on('message', (answer) => {
    if (answer.length < DNS_HEADER_OCTETS) return;
    const client = asked.get(answer.readUInt16BE(0));
    if (!client) return;
    asked.delete(answer.readUInt16BE(0));
    answer.writeUInt16BE(client.id, 0);
    front?.send(answer, client.rinfo.port, client.rinfo.address);
  });
  await new Promise<void>((resolve) => back.bind(0, '127.0.0.1', () => resolve()));

  // TCP: a connection to the server per client connection.
  const sockets = new Set<Socket>();
  const tcp: Server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (bytes) => {
      counts.tcp++; // a segment, usually one query: a client writes each query whole (RFC 7766 §8)
      later(() => upstream.write(bytes));
    });
    upstream.on('data', (bytes) => client.write(bytes));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });

  const bound = await bindBoth(onQuery, tcp);
  front = bound.udp;
  const { port } = bound;
  return {
    port,
    stats: () => ({ ...counts }),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => bound.udp.close(() => resolve())),
        new Promise<void>((resolve) => back.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

type Socket4 = ReturnType<typeof createSocket>;

/** A UDP socket on a loopback port (0: an ephemeral one) handing its datagrams to `onMessage`, or undefined if the port is taken. */
function bindUdp(port: number, onMessage: (message: Buffer, rinfo: RemoteInfo) => void): Promise<Socket4 | undefined> {
  const udp = createSocket({ type: 'udp4', recvBufferSize: UDP_RECEIVE_BUFFER });
  udp.on('message', onMessage);
  return new Promise((resolve) => {
    udp.once('error', () => resolve(undefined));
    udp.bind(port, '127.0.0.1', () => {
      udp.removeAllListeners('error');
      resolve(udp);
    });
  });
}

/** Listens with `tcp` on an ephemeral loopback port and binds a UDP socket to the same one, trying other ports if UDP's is taken. */
async function bindBoth(onMessage: (message: Buffer, rinfo: RemoteInfo) => void, tcp: Server): Promise<{ udp: Socket4; port: number }> {
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve()));
    const port = (tcp.address() as { port: number }).port;
    const udp = await bindUdp(port, onMessage);
    if (udp) return { udp, port };
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }
  throw new Error(`no loopback port free for both UDP and TCP after ${PORT_ATTEMPTS} attempts`);
}

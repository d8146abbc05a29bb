/** Loopback ports nothing listens on, for tests of what a refused connection becomes. */
import { createServer } from 'node:net';

/** A TCP port that was just free on 127.0.0.1 (listened on to learn it, then closed): connecting to it is refused. */
export async function closedTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

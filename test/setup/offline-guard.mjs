// A preload (`node --import`) that counts every way a process could reach the network other than
// loopback: the system resolver (dns.lookup, dns.resolve*, dns.Resolver, dns/promises), a UDP send,
// and a TCP connect to an address outside loopback or to a host name. At exit it writes the counts
// as JSON to the file named by OFFLINE_GUARD_OUT. Used by test/cli/offline.test.ts, together with a
// network namespace that holds only `lo`, to prove `--zones`/`--demo-zones` and `serve --demo` offline.
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const seen = { systemResolver: [], outside: [] };

/** Loopback only: 127.0.0.0/8, ::1, and the IPv4-mapped form of 127/8. */
function isLoopback(host) {
  if (typeof host !== 'string') return false;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return net.isIPv4(v4) && v4.startsWith('127.');
}

function countResolver(name) {
  return (original) =>
    function (...args) {
      // Node looks an IP literal up too (dgram, net): that answers at once and sends nothing.
      if (!(name === 'dns.lookup' && typeof args[0] === 'string' && net.isIP(args[0]) !== 0)) seen.systemResolver.push(`${name}(${typeof args[0] === 'string' ? args[0] : ''})`);
      return original.apply(this, args);
    };
}

const RESOLVE_METHODS = ['lookup', 'lookupService', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCaa', 'resolveCname', 'resolveMx', 'resolveNaptr', 'resolveNs', 'resolvePtr', 'resolveSoa', 'resolveSrv', 'resolveTxt', 'reverse'];
for (const target of [dns, dns.promises, dns.Resolver.prototype, dns.promises.Resolver.prototype]) {
  for (const method of RESOLVE_METHODS) {
    if (typeof target[method] === 'function') target[method] = countResolver(`dns.${method}`)(target[method]);
  }
}

const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function (msg, ...rest) {
  // send(msg, [offset, length,] port, address, callback): the address is the first string after msg.
  const address = rest.find((value) => typeof value === 'string');
  if (address !== undefined && !isLoopback(address)) seen.outside.push(`udp ${address}`);
  return send.call(this, msg, ...rest);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (first !== null && typeof first === 'object' && first.path === undefined) {
    const host = first.host ?? 'localhost';
    if (!isLoopback(host)) seen.outside.push(`tcp ${host}:${first.port}`);
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const host = typeof args[1] === 'string' ? args[1] : 'localhost';
    if (!isLoopback(host)) seen.outside.push(`tcp ${host}:${first}`);
  }
  return connect.apply(this, args);
};

syncBuiltinESMExports();

process.on('exit', () => {
  const out = process.env.OFFLINE_GUARD_OUT;
  if (out) writeFileSync(out, JSON.stringify(seen));
});

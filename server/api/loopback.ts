import net from 'node:net';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return net.isIPv4(v4) && v4.startsWith('127.');
}

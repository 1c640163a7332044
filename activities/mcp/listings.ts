/**
 * A server's resources as a pooled connection keeps them: a few pages of resources and templates
 * (enough for the resources tool's description and the server's digest; the tool pages through
 * the rest), and their digest.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';

/**
 * Pages of a server's resources (and of its templates) kept for the resources tool's description
 * and the digest: a server with more says so there, and the tool pages through the rest.
 */
const MAX_RESOURCE_PAGES = 5;

/** A server's resources as last listed (at most MAX_RESOURCE_PAGES pages of each). */
export interface McpResourceListing {
  resources: Resource[];
  templates: ResourceTemplate[];
  /** Whether the server had more than the pages kept. */
  more: boolean;
  digest: string;
}

/** Lists up to MAX_RESOURCE_PAGES pages of a server's resources and of its templates. */
export async function listResources(client: Client, timeoutMs: number): Promise<McpResourceListing> {
  const pages = async <T>(
    list: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string }>,
  ): Promise<{ items: T[]; more: boolean }> => {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_RESOURCE_PAGES; page++) {
      const r = await list(cursor);
      items.push(...r.items);
      cursor = r.nextCursor;
      if (!cursor) return { items, more: false };
    }
    return { items, more: true };
  };
  const opts = { timeout: timeoutMs };
  const resources = await pages(async (cursor) => {
    const r = await client.listResources(cursor ? { cursor } : {}, opts);
    return { items: r.resources, nextCursor: r.nextCursor };
  });
  // Templates are optional for a server: one that has none may answer "method not found".
  const templates = await pages(async (cursor) => {
    const r = await client.listResourceTemplates(cursor ? { cursor } : {}, opts);
    return { items: r.resourceTemplates, nextCursor: r.nextCursor };
  }).catch(() => ({ items: [] as ResourceTemplate[], more: false }));
  const canonical = JSON.stringify([
    resources.items.map((r) => [r.uri, r.name, r.mimeType ?? '', r.description ?? '']),
    templates.items.map((t) => [t.uriTemplate, t.name, t.description ?? '']),
  ]);
  return {
    resources: resources.items,
    templates: templates.items,
    more: resources.more || templates.more,
    digest: createHash('sha256').update(canonical).digest('hex').slice(0, 16),
  };
}

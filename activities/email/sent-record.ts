import type { ImapFlow } from 'imapflow';
import type { ResolvedAccount } from './config';
import type { EmailConnections } from './connections';
import { scopeOf } from './connections';
import { emailFailure, mapImapError } from './errors';

/** IMAP keyword on a Sent-folder copy whose SMTP transaction has started but is not confirmed. */
export const PENDING_KEYWORD = '$DurableAgentPending';
/** IMAP keyword on a Sent-folder copy whose message the SMTP server accepted. */
export const SENT_KEYWORD = '$DurableAgentSent';

/** What the Sent folder says about one Message-ID. */
export type SentRecordState =
  { state: 'none' } | { state: 'pending' | 'sent'; uid: number; recipients: string[] };

/**
 * The write-ahead record of send_email, kept as the message's own copy in the account's Sent
 * folder, so every worker (and the user, in any mail client) sees it:
 * `append` (keyword pending) before SMTP → `confirm` (keyword sent) after the server's 250 →
 * `remove` when the server definitely refused.
 */
export class SentRecord {
  private constructor(
    private readonly client: ImapFlow,
    private readonly account: ResolvedAccount,
    /** The folder the copies go to. */
    readonly folder: string,
  ) {}

  /** Opens the account's Sent folder ("auto" = the one marked \Sent, else "Sent"). */
  static async open(connections: EmailConnections, account: ResolvedAccount): Promise<SentRecord> {
    const client = await connections.imap(account);
    try {
      let folder = account.sentFolder as string;
      const boxes = await client.list();
      if (folder === 'auto') {
        folder =
          boxes.find((b) => b.specialUse === '\\Sent')?.path ??
          boxes.find((b) => /^sent$/i.test(b.path))?.path ??
          '';
      }
      if (!folder || !boxes.some((b) => b.path === folder)) {
        throw emailFailure(
          'EmailConfigError',
          `Email account "${account.name}" has no Sent folder${folder ? ` "${folder}"` : ' (none marked \\Sent)'}: ` +
            `set sentFolder to an existing folder, or to false to send without a record (no automatic retry)`,
        );
      }
      return new SentRecord(client, account, folder);
    } catch (err) {
      await client.logout().catch(() => undefined);
      throw mapImapError(err, scopeOf(account, 'IMAP'), account.sentFolder || undefined);
    }
  }

  private async inFolder<T>(fn: () => Promise<T>): Promise<T> {
    try {
      const lock = await this.client.getMailboxLock(this.folder);
      try {
        return await fn();
      } finally {
        lock.release();
      }
    } catch (err) {
      throw mapImapError(err, scopeOf(this.account, 'IMAP'), this.folder);
    }
  }

  /** Looks up the copy with this Message-ID; several copies count as sent if any is confirmed. */
  async find(messageId: string): Promise<SentRecordState> {
    return this.inFolder(async () => {
      const uids = await this.client.search({ header: { 'message-id': messageId } }, { uid: true });
      if (!uids || uids.length === 0) return { state: 'none' };
      let found: SentRecordState = { state: 'none' };
      for await (const msg of this.client.fetch(
        uids,
        { uid: true, flags: true, envelope: true },
        { uid: true },
      )) {
        // HEADER search is a substring match: insist on the exact id.
        if (msg.envelope?.messageId !== messageId) continue;
        const env = msg.envelope;
        const recipients = [...(env.to ?? []), ...(env.cc ?? []), ...(env.bcc ?? [])]
          .map((a) => a.address ?? '')
          .filter(Boolean);
        const sent = msg.flags?.has(SENT_KEYWORD) ?? false;
        if (sent || found.state === 'none') {
          found = { state: sent ? 'sent' : 'pending', uid: msg.uid, recipients };
        }
      }
      return found;
    });
  }

  /** Writes the copy marked pending (and \Seen: it is our own mail). Returns its UID. */
  async appendPending(raw: Buffer, messageId: string, date: Date): Promise<number> {
    const res = await this.inFolder(() =>
      this.client.append(this.folder, raw, ['\\Seen', PENDING_KEYWORD], date),
    );
    if (res && typeof res === 'object' && res.uid) return res.uid;
    // Servers without UIDPLUS do not say where the copy went: look it up.
    const found = await this.find(messageId);
    if (found.state === 'none') {
      throw emailFailure(
        'EmailTemporaryFailure',
        `The Sent-folder copy of ${messageId} was not found after APPEND; will retry`,
      );
    }
    return found.uid;
  }

  /** Marks the copy sent: from now on a retry returns the earlier result. */
  async confirm(uid: number): Promise<void> {
    await this.inFolder(async () => {
      // One STORE replaces pending with sent, so no state has both or neither.
      await this.client.messageFlagsSet(String(uid), ['\\Seen', SENT_KEYWORD], { uid: true });
    });
  }

  /** Deletes the copy of a message the server definitely did not accept. */
  async remove(uid: number): Promise<void> {
    await this.inFolder(async () => {
      await this.client.messageDelete(String(uid), { uid: true });
    });
  }

  /** Ends the IMAP session. */
  async close(): Promise<void> {
    await this.client.logout().catch(() => this.client.close());
  }
}

/*
 * The Node.js APIs the Node entry uses, declared by hand: Debian ships no @types/node, and the rest of the library
 * must type-check without Node. Signatures follow the Node 20 documentation, narrowed to what the entry calls.
 */

declare module "node:buffer" {
  const Buffer: { byteLength(text: string): number };
}

declare module "node:crypto" {
  interface Hash {
    update(data: Uint8Array | string): Hash;
    digest(encoding: "hex"): string;
  }
  function createHash(algorithm: "sha256"): Hash;
}

declare module "node:net" {
  function isIP(input: string): number;
}

declare module "node:tls" {
  interface PeerCertificate {
    /** The certificate's DER. */
    raw?: Uint8Array;
  }
  interface TLSSocket {
    getPeerCertificate(detailed?: boolean): PeerCertificate | null;
    once(event: "secureConnect", listener: () => void): TLSSocket;
    once(event: "error", listener: (error: Error) => void): TLSSocket;
    removeListener(event: "error", listener: (error: Error) => void): TLSSocket;
    destroy(error?: Error): void;
  }
  function connect(options: {
    host: string;
    port: number;
    servername?: string;
    rejectUnauthorized: boolean;
    minVersion?: "TLSv1.2" | "TLSv1.3";
    ALPNProtocols?: string[];
  }): TLSSocket;
}

declare module "node:https" {
  import type { TLSSocket } from "node:tls";
  class Agent {
    constructor(options?: { keepAlive?: boolean });
    createConnection(
      options: { host?: string; port?: number | string },
      callback: (error: Error | null, socket?: TLSSocket) => void,
    ): TLSSocket | undefined;
  }
  interface IncomingMessage {
    statusCode?: number;
    setEncoding(encoding: "utf8"): void;
    on(event: "data", listener: (chunk: string) => void): IncomingMessage;
    on(event: "end", listener: () => void): IncomingMessage;
    on(event: "error", listener: (error: Error) => void): IncomingMessage;
  }
  interface ClientRequest {
    setTimeout(ms: number, callback: () => void): ClientRequest;
    on(event: "error", listener: (error: Error) => void): ClientRequest;
    destroy(error?: Error): void;
    end(body?: string): void;
  }
  function request(
    url: string,
    options: { method: string; headers: { [name: string]: string | number }; agent: Agent },
    callback: (response: IncomingMessage) => void,
  ): ClientRequest;
}

// tasksessiond for OpenCode: the four Task tools (TaskCreate, TaskList,
// TaskGet, TaskUpdate), bound to the OpenCode session that calls them (or
// to the named session TASKSESSIOND_SESSION), and the task list carried
// across OpenCode's compaction.
//
// Install: "tasksessiond setup opencode" (writes this file into
// ~/.config/opencode/plugin/ and turns OpenCode's own to-do tools off), or
// "opencode plugin opencode-tasksessiond --global" (the npm package).
// See contrib/opencode/README.md for what happens at each point of a
// session's life.
//
// Every call goes to the tasksessiond daemon over its Unix socket (JSON-RPC
// 2.0, one message a line; docs/PROTOCOL.md): the daemon session's id is the
// OpenCode session's id, created on first use and followed through
// compaction (sessions/get headId). A subagent's session (a child session)
// works on its root session's list. With TASKSESSIOND_SESSION set, every
// OpenCode session (and its subagents) works on that daemon session
// instead: one list shared across sessions, and with other hosts bound to
// the same name. When no daemon answers, the plugin starts "tasksessiond
// serve" detached (unless TASKSESSIOND_AUTOSTART=0).
import type { Plugin } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import fs from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"

// ---------------------------------------------------------------- the wire

const CODE_NOT_FOUND = -32001
const CODE_SEALED = -32002
const CODE_EXISTS = -32005 // sessions/create: the session exists already

class RPCError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: any,
  ) {
    super(message)
  }
}

// socketPath is where the daemon listens: TASKSESSIOND_SOCKET, else
// $XDG_RUNTIME_DIR/tasksessiond/tasksessiond.sock, else
// /tmp/tasksessiond-$UID/tasksessiond.sock (as the daemon chooses it).
function socketPath(): string {
  const env = process.env.TASKSESSIOND_SOCKET
  if (env) return env
  const runtime = process.env.XDG_RUNTIME_DIR
  if (runtime) return path.join(runtime, "tasksessiond", "tasksessiond.sock")
  const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().uid
  return path.join("/tmp", `tasksessiond-${uid}`, "tasksessiond.sock")
}

// namedSession is the daemon session every OpenCode session works on when
// TASKSESSIOND_SESSION is set (as the bridge reads it: as it is, empty is
// unset), else undefined: each root session its own list.
function namedSession(): string | undefined {
  return process.env.TASKSESSIOND_SESSION || undefined
}

function autostartEnabled(): boolean {
  const v = (process.env.TASKSESSIOND_AUTOSTART ?? "").trim().toLowerCase()
  return !["0", "false", "no", "off"].includes(v)
}

// absent reports whether a connection error means that no daemon listens.
function absent(err: any): boolean {
  return err?.code === "ENOENT" || err?.code === "ECONNREFUSED"
}

let nextID = 1

// rpc sends one request on a connection of its own and returns its result.
// A connection per request keeps a daemon restart (or crash) invisible to
// every call but the one in flight.
function rpcOnce(method: string, params: any, timeoutMs = 10_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const id = nextID++
    const sock = net.createConnection({ path: socketPath() })
    let buf = ""
    let done = false
    const finish = (err: any, result?: any) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      err ? reject(err) : resolve(result)
    }
    const timer = setTimeout(() => finish(Object.assign(new Error(`tasksessiond: no answer to ${method} within ${timeoutMs} ms`), { code: "ETIMEDOUT" })), timeoutMs)
    sock.setEncoding("utf8")
    sock.on("connect", () => sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"))
    sock.on("data", (chunk: string) => {
      buf += chunk
      const nl = buf.indexOf("\n")
      if (nl < 0) return
      let msg: any
      try {
        msg = JSON.parse(buf.slice(0, nl))
      } catch (e) {
        return finish(new Error(`tasksessiond: a reply that is not JSON: ${buf.slice(0, 200)}`))
      }
      if (msg.error) return finish(new RPCError(msg.error.code, msg.error.message, msg.error.data))
      finish(null, msg.result)
    })
    sock.on("error", (err) => finish(err))
    sock.on("close", () => finish(Object.assign(new Error(`tasksessiond: the daemon closed the connection during ${method}`), { code: "ECONNRESET" })))
  })
}

let starting: Promise<void> | undefined

// startDaemon runs "tasksessiond serve" in a session of its own, logging to
// tasksessiond.log beside the socket; when several start at once, the
// database lock lets exactly one serve and the others exit.
function startDaemon(): Promise<void> {
  starting ??= (async () => {
    const sock = socketPath()
    const dir = path.dirname(sock)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const log = fs.openSync(path.join(dir, "tasksessiond.log"), "a", 0o600)
    try {
      const args = ["serve", "--socket", sock]
      if (process.env.TASKSESSIOND_DB) args.push("--db", process.env.TASKSESSIOND_DB)
      const child = spawn(process.env.TASKSESSIOND_BIN || "tasksessiond", args, {
        detached: true,
        stdio: ["ignore", log, log],
      })
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", () => resolve())
        child.once("error", (err) => reject(new Error(`tasksessiond: cannot start the daemon (tasksessiond serve): ${err.message}; put tasksessiond on PATH or set TASKSESSIOND_BIN`)))
      })
      child.unref()
    } finally {
      fs.closeSync(log)
    }
  })().finally(() => {
    starting = undefined
  })
  return starting
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// rpc is rpcOnce that starts the daemon when none answers and retries for
// up to 10 seconds while it comes up (or while a crashed one is restarted).
async function rpc(method: string, params: any): Promise<any> {
  const deadline = Date.now() + 10_000
  let started = false
  let delay = 20
  for (;;) {
    try {
      return await rpcOnce(method, params)
    } catch (err: any) {
      if (err instanceof RPCError || Date.now() > deadline) throw err
      if (!absent(err) && err?.code !== "ECONNRESET") throw err
      if (absent(err) && !started) {
        if (!autostartEnabled()) throw new Error(`tasksessiond: no daemon answers at ${socketPath()} and ${"TASKSESSIOND_AUTOSTART"}=0: start it (tasksessiond serve)`)
        started = true
        await startDaemon()
      }
      await sleep(delay)
      delay = Math.min(2 * delay, 200)
    }
  }
}

// ---------------------------------------------------------------- sessions

type SessionInfo = { id: string; parentID?: string; title?: string; directory?: string }

// head returns the session of the lineage that takes writes (the daemon
// follows compaction: sessions/get's headId), or undefined when the
// daemon has no such session.
async function head(id: string): Promise<string | undefined> {
  try {
    const r = await rpc("sessions/get", { sessionId: id })
    return r.session.headId || r.session.id
  } catch (err) {
    if (err instanceof RPCError && err.code === CODE_NOT_FOUND) return undefined
    throw err
  }
}

// listOf is the daemon session (the lineage's first) that holds the list
// of the root OpenCode session root: TASKSESSIOND_SESSION, else root's id.
function listOf(root: SessionInfo): string {
  return namedSession() ?? root.id
}

// ensure returns the head of root's list (listOf), creating the session on
// first use. A root session the daemon does not know but whose history
// holds Task writes (history: a fork's copied messages, or a list lost
// with its database) is rebuilt from them (sessions/replay), as the Claude
// Code hook rebuilds one from its transcript.
async function ensure(root: SessionInfo, history?: (id: string) => Promise<any[]>): Promise<string> {
  const id = listOf(root)
  const h = await head(id)
  if (h) return h
  if (history && id === root.id) {
    const calls = await history(root.id)
    if (calls.length > 0) {
      try {
        await rpc("sessions/replay", { sessionId: id, calls })
      } catch (err) {
        // Made meanwhile (a call beside this one): that one stands.
        if (!(err instanceof RPCError && err.code === CODE_EXISTS)) throw err
      }
      return (await head(id)) ?? id
    }
  }
  try {
    await rpc("sessions/create", {
      sessionId: id,
      title: id === root.id ? root.title || `OpenCode session ${id}` : id,
      metadata: { host: "opencode", opencodeSessionId: root.id, ...(root.directory ? { directory: root.directory } : {}) },
    })
  } catch (err) {
    if (!(err instanceof RPCError && err.code === CODE_EXISTS)) throw err
  }
  return (await head(id)) ?? id
}

// resultText is what OpenCode passes the model: the result's text content.
function resultText(result: any): string {
  return (result?.content ?? [])
    .filter((c: any) => c?.type === "text")
    .map((c: any) => c.text)
    .join("\n")
}

// ---------------------------------------------------------------- the tools

// The tools' descriptions and argument schemas are the daemon's (tools/list);
// e2e/opencode checks that they stay equal.
const DESCRIPTIONS = {
  TaskCreate:
    "Add a pending task, one per step of your plan; it gets the next taskid. The list survives compaction.",
  TaskList: "Show every task in taskid order.",
  TaskGet: "Show one task whole.",
  TaskUpdate:
    "Set a task's status (inprogress when started, completed when done, deleted to withdraw it), subject or description.",
}

const WRITES = new Set(["TaskCreate", "TaskUpdate"])

// MAX_CHARS bounds the list the plugin puts in front of the model after a
// compaction (and in the summariser's prompt), as the hooks bound theirs:
// OpenCode has no limit of its own for this text. The daemon fits it
// (maxChars): whole when it fits, else closed tasks and long descriptions
// shortened first, every open task's id, status and subject kept.
const MAX_CHARS = 9_500

export const TasksessiondPlugin: Plugin = async ({ client }) => {
  const z = tool.schema

  // OpenCode sessions never change parent; cache what session.get says.
  const infos = new Map<string, Promise<SessionInfo>>()
  function sessionInfo(id: string): Promise<SessionInfo> {
    let p = infos.get(id)
    if (!p) {
      p = (async () => {
        const res: any = await client.session.get({ path: { id } })
        const data = res?.data ?? res
        if (!data?.id) throw new Error(`OpenCode does not know session ${id}: ${JSON.stringify(res?.error ?? res)}`)
        return { id: data.id, parentID: data.parentID, title: data.title, directory: data.directory }
      })()
      infos.set(id, p)
      p.catch(() => infos.delete(id))
    }
    return p
  }

  // owner is the OpenCode session whose list a session works on: its root.
  // A subagent runs in a child session (parentID set) of the session that
  // called the task tool; it reads and writes that session's list, so the
  // plan stays one.
  async function owner(id: string): Promise<SessionInfo> {
    let info = await sessionInfo(id)
    for (let depth = 0; info.parentID && depth < 32; depth++) info = await sessionInfo(info.parentID)
    return info
  }

  // history returns the Task writes of OpenCode session id's messages and
  // of its subagents' (child sessions, and those its task calls name: a
  // fork's copied messages name its source's), in the order made, as
  // sessions/replay takes them. A call that failed is marked, and skipped
  // by the replay; one still running is left out.
  async function history(id: string): Promise<any[]> {
    const found: { at: number; call: any }[] = []
    const seen = new Set<string>()
    const visit = async (sid: string, depth: number) => {
      if (seen.has(sid) || depth > 8) return
      seen.add(sid)
      const res: any = await client.session.messages({ path: { id: sid } })
      const kids = new Set<string>()
      for (const m of res?.data ?? res ?? []) {
        for (const p of m?.parts ?? []) {
          if (p?.type !== "tool") continue
          const st = p.state ?? {}
          const child = st.metadata?.sessionId ?? p.metadata?.sessionId
          if (p.tool === "task" && typeof child === "string") kids.add(child)
          if (!WRITES.has(p.tool) || (st.status !== "completed" && st.status !== "error")) continue
          found.push({
            at: st.time?.start ?? 0,
            call: { name: p.tool, arguments: st.input ?? {}, callId: `opencode:${p.messageID}:${p.callID}`, ...(st.status === "error" ? { isError: true } : {}) },
          })
        }
      }
      try {
        const c: any = await client.session.children({ path: { id: sid } })
        for (const k of c?.data ?? c ?? []) if (typeof k?.id === "string") kids.add(k.id)
      } catch {}
      for (const k of kids) await visit(k, depth + 1)
    }
    await visit(id, 0)
    found.sort((a, b) => a.at - b.at) // stable: a message's parts keep their order
    return found.map((f) => f.call)
  }

  async function log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>) {
    try {
      await client.app.log({ body: { service: "tasksessiond", level, message: `tasksessiond: ${message}`, extra } })
    } catch {}
  }

  // call runs one Task tool call in the list of the OpenCode session
  // sessionID (its root's, for a subagent), returning the result's text.
  // A write carries a callId: the OpenCode message and tool call it
  // answers, so that a retry (after a reconnect, a daemon restart or a
  // compaction in between) is applied once.
  async function call(name: string, args: any, ctx: any): Promise<{ title: string; output: string; metadata: any }> {
    const root = await owner(ctx.sessionID)
    const callId = WRITES.has(name)
      ? ctx.callID
        ? `opencode:${ctx.messageID}:${ctx.callID}`
        : `opencode:${randomUUID()}`
      : undefined
    let sessionId = await ensure(root, history)
    for (let attempt = 0; ; attempt++) {
      let result: any
      try {
        result = await rpc("tools/call", { sessionId, name, arguments: args ?? {}, ...(callId ? { callId } : {}) })
      } catch (err: any) {
        if (!(err instanceof RPCError)) {
          // The daemon could not be reached, or did not answer.
          const msg = String(err?.message ?? err)
          throw msg.startsWith("tasksessiond") ? err : new Error(`tasksessiond: ${msg}`)
        }
        if (attempt >= 3) throw err
        if (err.code === CODE_SEALED) {
          // Compacted since we looked: go on in the successor.
          sessionId = err.data?.successorId || (await ensure(root))
          continue
        }
        if (err.code === CODE_NOT_FOUND) {
          sessionId = await ensure(root, history)
          continue
        }
        throw new Error(`tasksessiond: ${err.message} (code ${err.code})`)
      }
      // A mistake the model can fix: thrown, so OpenCode marks the call
      // failed; the model reads the daemon's message as it is.
      const text = resultText(result)
      if (result?.isError) throw new Error(text || `${name} failed`)
      return { title: name, output: text, metadata: { tasksessiondSession: sessionId } }
    }
  }

  // As the daemon's schemas have them: what its decoder takes.
  const taskid = () => z.union([z.number(), z.string().regex(/^\s*#?\d+\s*$/)]) // no .int(): zod writes a maximum the model reads; the daemon checks
  // Lengths are the daemon's to check (it says the limit when one is
  // passed): the schema goes to the model with every request.
  const text = () => z.string()

  // The snapshot each compaction injected, by the id of OpenCode's
  // compaction message (the user message the summary answers).
  const snapshots = new Map<string, string | null>()

  // successorOf names the daemon session a compaction makes: the list's
  // id (listOf: the root OpenCode session's, or TASKSESSIOND_SESSION) and
  // the compaction message's id, so that the snapshot can be found again
  // by any later OpenCode process (a "run --session" after a restart) and
  // a compaction run twice is compacted once.
  const successorOf = (list: string, compactionMessageID: string) => `${list}/${compactionMessageID}`

  async function snapshotOf(list: string, compactionMessageID: string): Promise<string | null> {
    if (snapshots.has(compactionMessageID)) return snapshots.get(compactionMessageID)!
    let text: string | null = null
    try {
      const r = await rpc("sessions/resume", { sessionId: successorOf(list, compactionMessageID), maxChars: MAX_CHARS })
      text = r?.messages?.find((m: any) => m.kind === "task_snapshot")?.content ?? null
    } catch (err) {
      if (!(err instanceof RPCError && err.code === CODE_NOT_FOUND)) throw err
    }
    snapshots.set(compactionMessageID, text)
    return text
  }

  // lastCompaction returns the id of the session's newest compaction
  // message (a user message holding a "compaction" part).
  async function lastCompaction(sessionID: string): Promise<string | undefined> {
    const res: any = await client.session.messages({ path: { id: sessionID } })
    const msgs: any[] = res?.data ?? res ?? []
    for (let i = msgs.length - 1; i >= 0; i--) {
      const m = msgs[i]
      if (m?.info?.role === "user" && m.parts?.some((p: any) => p.type === "compaction")) return m.info.id
    }
    return undefined
  }

  const marker = "tasksessiond-snapshot"
  const warned = new Set<string>()

  return {
    tool: {
      TaskCreate: tool({
        description: DESCRIPTIONS.TaskCreate,
        args: {
          subject: text(),
          description: text().optional(),
        },
        execute: (args, ctx) => call("TaskCreate", args, ctx),
      }),
      TaskList: tool({
        description: DESCRIPTIONS.TaskList,
        args: {},
        execute: (args, ctx) => call("TaskList", args, ctx),
      }),
      TaskGet: tool({
        description: DESCRIPTIONS.TaskGet,
        args: {
          taskid: taskid(),
        },
        execute: (args, ctx) => call("TaskGet", args, ctx),
      }),
      TaskUpdate: tool({
        description: DESCRIPTIONS.TaskUpdate,
        args: {
          taskid: taskid(),
          status: z.enum(["pending", "inprogress", "completed", "deleted", "in_progress", "in-progress"]).optional(),
          subject: text().optional(),
          description: text().optional(),
        },
        execute: (args, ctx) => call("TaskUpdate", args, ctx),
      }),
    },

    // Before OpenCode summarises a session: compact its daemon session
    // (the successor keeps every task and the taskid counter) and give the
    // summariser the list. A subagent's session only reads its root's list
    // into the summary; the root's own compaction compacts the list.
    "experimental.session.compacting": async (input, output) => {
      try {
        const info = await sessionInfo(input.sessionID)
        const root = await owner(input.sessionID)
        const list = listOf(root)
        const h = await head(list)
        if (!h) return // no list yet: nothing to carry
        if (info.parentID) {
          const snap = await rpc("sessions/snapshot", { sessionId: h, maxChars: MAX_CHARS })
          if (snap?.text) output.context.push(snap.text)
          return
        }
        const compaction = await lastCompaction(input.sessionID)
        if (!compaction) return
        const successor = successorOf(list, compaction)
        if (h !== successor) {
          try {
            await rpc("sessions/compact", { sessionId: h, newSessionId: successor })
          } catch (err) {
            // Compacted already (this compaction run twice, or a retry
            // after a lost reply): fine if it made our successor.
            if (!(err instanceof RPCError) || (await head(list)) !== successor) throw err
          }
        }
        // The list as the successor starts with it, fitted: what the
        // model will read after the compaction too.
        const text = await snapshotOf(list, compaction)
        if (text) output.context.push(text)
      } catch (err: any) {
        await log("warn", `could not carry the task list across compaction: ${err?.message ?? err}`, { sessionID: input.sessionID })
      }
    },

    // After a compaction, the model's context starts from the summary.
    // Put the list as it was at the compaction (the snapshot the daemon
    // made, fitted to MAX_CHARS) in front of the model, once: in the
    // compaction message itself (which the model reads as "What did we do
    // so far?"), before the summary that answers it. It is added to every
    // request after the compaction, at the same place and the same text,
    // as if OpenCode had stored it there (as Claude Code and Codex store a
    // hook's context): one copy in each request, and the requests' prefix
    // unchanged for the provider's cache.
    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        const msgs = output.messages
        const summary = msgs.findLast((m: any) => m.info.role === "assistant" && (m.info as any).summary && (m.info as any).finish && !(m.info as any).error)
        if (!summary) return
        const parentID = (summary.info as any).parentID as string
        const compaction = msgs.find((m: any) => m.info.id === parentID && m.info.role === "user")
        if (!compaction || compaction.parts.some((p: any) => p.metadata?.[marker])) return
        const root = await owner(summary.info.sessionID)
        if (root.id !== summary.info.sessionID) return
        const text = await snapshotOf(listOf(root), parentID)
        if (!text) return
        compaction.parts.unshift({
          id: `prt_${marker}_${parentID}`,
          sessionID: summary.info.sessionID,
          messageID: parentID,
          type: "text",
          text,
          synthetic: true,
          metadata: { [marker]: true },
        } as any)
      } catch (err: any) {
        // Said once per compaction; the next request tries again.
        const key = String(err?.message ?? err)
        if (!warned.has(key)) {
          warned.add(key)
          await log("warn", `could not add the task list after compaction: ${key}`)
        }
      }
    },
  }
}

export default TasksessiondPlugin

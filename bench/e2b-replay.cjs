// bench/e2b-replay.cjs FILE [BYTES]: serve a recorded Connect stream of
// process.Process/Start to every request, as it is or with its output
// re-cut into messages of BYTES. Run by bench/e2b.cjs in a process of its
// own, so that the SDK it serves has a core to itself as against holt.
const http = require('node:http')
const fs = require('node:fs')

// One Connect envelope: flags, length, JSON (bench/e2b.cjs uses it too).
const env = (o, flags = 0) => {
  const j = Buffer.from(JSON.stringify(o))
  const h = Buffer.alloc(5)
  h[0] = flags
  h.writeUInt32BE(j.length, 1)
  return Buffer.concat([h, j])
}

// The envelopes of a recorded stream.
function* envelopes(buf) {
  for (let i = 0; i < buf.length;) {
    const n = buf.readUInt32BE(i + 1)
    yield [buf[i], buf.subarray(i + 5, i + 5 + n)]
    i += 5 + n
  }
}

// The same stream with its stdout in messages of size bytes.
function recut(buf, size) {
  const out = []
  let pending = []
  const flush = () => {
    const all = Buffer.concat(pending)
    for (let i = 0; i < all.length; i += size)
      out.push(env({ event: { data: { stdout: all.subarray(i, i + size).toString('base64') } } }))
    pending = []
  }
  for (const [flags, body] of envelopes(buf)) {
    const m = flags === 0 ? JSON.parse(body) : null
    if (m && m.event && m.event.data && m.event.data.stdout !== undefined) {
      pending.push(Buffer.from(m.event.data.stdout, 'base64'))
      continue
    }
    flush()
    out.push(env(JSON.parse(body), flags))
  }
  return Buffer.concat(out)
}

function serve(file, size) {
  const rec = fs.readFileSync(file)
  const stream = size ? recut(rec, size) : rec
  const srv = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/connect+json' })
      res.end(stream)
    })
  })
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${srv.address().port}\n`))
}

if (require.main === module)
  serve(process.argv[2], Number(process.argv[3] || 0))
module.exports = { envelope: env }

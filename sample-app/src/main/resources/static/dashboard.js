'use strict';
// Live dashboard. The server samples every engine twice a second from start-up on and keeps the last minute: the page
// draws GET dashboard/history first, so its charts start full, then follows GET dashboard/events (one snapshot per
// sample). Rates come from the server, averaged over its rate window (sample.dashboard.rate-window, 5 s): the demo
// moves a burst once a second, and a rate between two samples half a second apart would zig-zag.

const WINDOW_SECONDS = 60;
const COLOURS = ['#2f6fde', '#e0712f', '#2fbf71', '#a04fd6', '#d64545', '#1fa5b5', '#8a6d3b', '#555'];
const DASH = '4 3'; // the 'in' lines, in the charts and in their legend

let lastTime = 0;
let rateWindowSeconds = 0;
const rates = new Map(); // engine name -> NIC -> [{t, out, in, imm}]

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]);
}

function megabytes(bytes) {
  return (bytes / 1048576).toFixed(1);
}

function recordRates(snapshot) {
  for (const engine of snapshot.engines) {
    const nics = rates.get(engine.name) || new Map();
    rates.set(engine.name, nics);
    for (const nic of engine.nics) {
      if (nic.rates.windowMillis <= 0) {
        continue;
      }
      rateWindowSeconds = Math.max(rateWindowSeconds, nic.rates.windowMillis / 1000);
      const series = nics.get(nic.nic) || [];
      nics.set(nic.nic, series);
      series.push({t: snapshot.timeMillis, out: nic.rates.bytesOut, in: nic.rates.bytesIn, imm: nic.rates.imms});
      while (series.length && series[0].t < snapshot.timeMillis - WINDOW_SECONDS * 1000) {
        series.shift();
      }
    }
  }
}

function latest(engineName, nic) {
  const series = (rates.get(engineName) || new Map()).get(nic) || [];
  return series.length ? series[series.length - 1] : {out: 0, in: 0, imm: 0};
}

// An SVG line chart of the last WINDOW_SECONDS: one line per (NIC, field), dashed for the second field.
function chart(engineName, now, fields, unit, scale) {
  const width = 560, height = 130, left = 48, bottom = 16;
  const nics = rates.get(engineName) || new Map();
  let max = 0;
  for (const series of nics.values()) {
    for (const point of series) {
      for (const field of fields) {
        max = Math.max(max, point[field] / scale);
      }
    }
  }
  max = max > 0 ? max * 1.1 : 1;
  const x = t => left + (width - left) * (1 - (now - t) / (WINDOW_SECONDS * 1000));
  const y = v => (height - bottom) * (1 - v / scale / max);
  let lines = '';
  let index = 0;
  for (const [nic, series] of nics) {
    const colour = COLOURS[index++ % COLOURS.length];
    fields.forEach((field, f) => {
      const points = series.map(p => x(p.t).toFixed(1) + ',' + y(p[field]).toFixed(1)).join(' ');
      lines += `<polyline fill="none" stroke="${colour}" stroke-width="1.8"${f ? ` stroke-dasharray="${DASH}"` : ''}`
        + ` points="${points}" data-nic="${escapeHtml(nic)}" data-field="${field}"/>`;
    });
  }
  return `<svg viewBox="0 0 ${width} ${height}" role="img">`
    + `<line x1="${left}" y1="0" x2="${left}" y2="${height - bottom}" stroke="#ccd"/>`
    + `<line x1="${left}" y1="${height - bottom}" x2="${width}" y2="${height - bottom}" stroke="#ccd"/>`
    + `<text x="2" y="10">${max.toFixed(1)}</text><text x="2" y="${height - bottom}">0 ${unit}</text>`
    + `<text x="${left}" y="${height - 3}">-${WINDOW_SECONDS} s</text><text x="${width - 24}" y="${height - 3}">now</text>`
    + lines + '</svg>';
}

// The legend draws each entry as the chart draws its line: same colour, same stroke, dashed for the second field.
function legend(engine, fields) {
  return '<p class="legend">' + engine.nics.map((nic, i) => fields.map((field, f) =>
    `<span data-nic="${escapeHtml(nic.nic)}" data-field="${field}"><svg class="swatch" viewBox="0 0 24 8">`
    + `<line x1="0" y1="4" x2="24" y2="4" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="1.8"`
    + `${f ? ` stroke-dasharray="${DASH}"` : ''}/></svg>NIC ${escapeHtml(nic.nic)} ${field}</span>`).join('')).join('')
    + '</p>';
}

// Peer states are this engine's own outbound connection to each peer: a peer that only writes to this engine (prefill,
// seen from decode) is IDLE here although its bytes arrive.
const PEER_STATES = {
  IDLE: 'IDLE: this engine sends it nothing (it may still send to us)',
  CONNECTING: 'CONNECTING: this engine is connecting to it',
  CONNECTED: 'CONNECTED: this engine sends to it',
  UNREACHABLE: 'UNREACHABLE: this engine could not reach it'
};

function engineCard(engine, now) {
  const nicRows = engine.nics.map(nic => {
    const rate = latest(engine.name, nic.nic);
    return `<tr data-engine="${escapeHtml(engine.name)}" data-nic="${escapeHtml(nic.nic)}">`
      + `<td>${escapeHtml(nic.nic)}</td><td>${escapeHtml(nic.address)}</td>`
      + `<td class="num" data-metric="outRate">${megabytes(rate.out)}</td>`
      + `<td class="num" data-metric="inRate">${megabytes(rate.in)}</td>`
      + `<td class="num" data-metric="immRate">${rate.imm.toFixed(0)}</td>`
      + `<td class="num" data-metric="bytesOut">${megabytes(nic.bytesOut)}</td>`
      + `<td class="num" data-metric="bytesIn">${megabytes(nic.bytesIn)}</td>`
      + `<td class="num" data-metric="imms">${nic.imms}</td></tr>`;
  }).join('');
  const peerRows = engine.peers.length ? engine.peers.map(peer =>
    `<tr><td>${escapeHtml(peer.nic)}</td><td>${escapeHtml(peer.address)}</td>`
    + `<td class="state-${escapeHtml(peer.state)}">${escapeHtml(PEER_STATES[peer.state] || peer.state)}</td>`
    + `<td>${escapeHtml(peer.lastError)}</td></tr>`).join('')
    : '<tr><td colspan="4" class="dim">no peers yet</td></tr>';
  const imms = engine.nics.some(nic => nic.imms > 0);
  const averaged = rateWindowSeconds > 0 ? `, ${rateWindowSeconds.toFixed(0)} s average` : '';
  return `<div class="card engine" data-engine="${escapeHtml(engine.name)}">`
    + `<h2>${escapeHtml(engine.name)} <span class="badge ${engine.healthy ? 'up">UP' : 'down">DOWN'}</span>`
    + ` <span class="dim">${escapeHtml(engine.transport)} ${escapeHtml(engine.address)},`
    + ` in flight <span data-metric="inFlight">${engine.inFlight}</span></span></h2>`
    + '<table><thead><tr><th>NIC</th><th>address</th><th class="num">out MB/s</th><th class="num">in MB/s</th>'
    + '<th class="num">imm/s</th><th class="num">out MB total</th><th class="num">in MB total</th>'
    + `<th class="num">imms total</th></tr></thead><tbody>${nicRows}</tbody></table>`
    + `<h3>Throughput per NIC, MB/s${averaged}</h3>` + chart(engine.name, now, ['out', 'in'], 'MB/s', 1048576)
    + legend(engine, ['out', 'in'])
    + (imms
      ? `<h3>Imm events per NIC, per second${averaged}</h3>` + chart(engine.name, now, ['imm'], '/s', 1)
      : '<p class="dim" data-chart="imm-none">No imm events received by this engine (it only sends).</p>')
    + `<h3>Peers of ${escapeHtml(engine.name)}</h3>`
    + '<table><thead><tr><th>NIC</th><th>peer</th><th>state of this engine\'s connection to it</th>'
    + '<th>last error</th></tr></thead>'
    + `<tbody>${peerRows}</tbody></table></div>`;
}

function render(snapshot) {
  if (snapshot.timeMillis <= lastTime) {
    return; // already drawn from the history
  }
  lastTime = snapshot.timeMillis;
  recordRates(snapshot);
  document.getElementById('engines').innerHTML =
    snapshot.engines.map(engine => engineCard(engine, snapshot.timeMillis)).join('');
  document.querySelector('#latencies tbody').innerHTML = snapshot.latencies.length
    ? snapshot.latencies.map(latency => `<tr><td title="${escapeHtml(latency.meter)}">${escapeHtml(latency.name)}</td>`
      + `<td class="num">${latency.count}</td><td class="num">${latency.p50Millis.toFixed(2)}</td>`
      + `<td class="num">${latency.p90Millis.toFixed(2)}</td><td class="num">${latency.p99Millis.toFixed(2)}</td></tr>`)
      .join('')
    : '<tr><td colspan="5" class="dim">no timer publishes percentiles yet</td></tr>';
  const status = document.getElementById('status');
  status.className = 'status live';
  status.textContent = 'live, KV ' + snapshot.kvMode + ' mode, '
    + new Date(snapshot.timeMillis).toLocaleTimeString();
}

function follow() {
  const events = new EventSource('dashboard/events');
  events.addEventListener('snapshot', event => render(JSON.parse(event.data)));
  events.onerror = () => {
    const status = document.getElementById('status');
    status.className = 'status lost';
    status.textContent = 'connection lost, reconnecting…';
  };
}

// the last minute first (only the newest snapshot renders the cards; the others only add to the charts), then live
fetch('dashboard/history')
  .then(response => response.ok ? response.json() : [])
  .then(history => {
    document.body.dataset.history = String(history.length); // how many past snapshots the charts started with
    history.slice(0, -1).forEach(snapshot => {
      lastTime = snapshot.timeMillis;
      recordRates(snapshot);
    });
    if (history.length) {
      render(history[history.length - 1]);
    }
  })
  .catch(() => {})
  .finally(follow);

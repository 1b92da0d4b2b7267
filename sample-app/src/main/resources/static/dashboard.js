'use strict';
// Live dashboard: one EventSource on /dashboard/events. Each snapshot carries counter totals; two consecutive
// snapshots give the rates drawn here, so the server keeps nothing per viewer.

const WINDOW_SECONDS = 60;
const COLOURS = ['#2f6fde', '#e0712f', '#2fbf71', '#a04fd6', '#d64545', '#1fa5b5', '#8a6d3b', '#555'];

let previous = null;
const rates = new Map(); // engine name -> NIC -> [{t, out, in, imm}]

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]);
}

function megabytes(bytes) {
  return (bytes / 1048576).toFixed(1);
}

function recordRates(snapshot) {
  const before = new Map();
  if (previous) {
    for (const engine of previous.engines) {
      for (const nic of engine.nics) {
        before.set(engine.name + '/' + nic.nic, nic);
      }
    }
  }
  const seconds = previous ? (snapshot.timeMillis - previous.timeMillis) / 1000 : 0;
  for (const engine of snapshot.engines) {
    const nics = rates.get(engine.name) || new Map();
    rates.set(engine.name, nics);
    for (const nic of engine.nics) {
      const old = before.get(engine.name + '/' + nic.nic);
      if (!old || seconds <= 0) {
        continue;
      }
      const series = nics.get(nic.nic) || [];
      nics.set(nic.nic, series);
      series.push({
        t: snapshot.timeMillis,
        out: (nic.bytesOut - old.bytesOut) / seconds,
        in: (nic.bytesIn - old.bytesIn) / seconds,
        imm: (nic.imms - old.imms) / seconds
      });
      while (series.length && series[0].t < snapshot.timeMillis - WINDOW_SECONDS * 1000) {
        series.shift();
      }
    }
  }
  previous = snapshot;
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
      lines += `<polyline fill="none" stroke="${colour}" stroke-width="1.8"${f ? ' stroke-dasharray="4 3"' : ''}`
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

function legend(engine, fields) {
  return '<p class="legend">' + engine.nics.map((nic, i) => fields.map((field, f) =>
    `<span><i class="swatch" style="background:${COLOURS[i % COLOURS.length]};${f ? 'opacity:0.5' : ''}"></i>`
    + `NIC ${escapeHtml(nic.nic)} ${field}</span>`).join('')).join('') + '</p>';
}

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
    + `<td class="state-${escapeHtml(peer.state)}">${escapeHtml(peer.state)}</td>`
    + `<td>${escapeHtml(peer.lastError)}</td></tr>`).join('')
    : '<tr><td colspan="4" class="dim">no peers yet</td></tr>';
  return `<div class="card engine" data-engine="${escapeHtml(engine.name)}">`
    + `<h2>${escapeHtml(engine.name)} <span class="badge ${engine.healthy ? 'up">UP' : 'down">DOWN'}</span>`
    + ` <span class="dim">${escapeHtml(engine.transport)} ${escapeHtml(engine.address)},`
    + ` in flight <span data-metric="inFlight">${engine.inFlight}</span></span></h2>`
    + '<table><thead><tr><th>NIC</th><th>address</th><th class="num">out MB/s</th><th class="num">in MB/s</th>'
    + '<th class="num">imm/s</th><th class="num">out MB total</th><th class="num">in MB total</th>'
    + `<th class="num">imms total</th></tr></thead><tbody>${nicRows}</tbody></table>`
    + '<h3>Throughput per NIC, MB/s</h3>' + chart(engine.name, now, ['out', 'in'], 'MB/s', 1048576)
    + legend(engine, ['out', 'in'])
    + '<h3>Imm events per NIC, per second</h3>' + chart(engine.name, now, ['imm'], '/s', 1)
    + '<h3>Peers</h3><table><thead><tr><th>NIC</th><th>peer</th><th>state</th><th>last error</th></tr></thead>'
    + `<tbody>${peerRows}</tbody></table></div>`;
}

function render(snapshot) {
  recordRates(snapshot);
  document.getElementById('engines').innerHTML =
    snapshot.engines.map(engine => engineCard(engine, snapshot.timeMillis)).join('');
  document.querySelector('#latencies tbody').innerHTML = snapshot.latencies.length
    ? snapshot.latencies.map(latency => `<tr><td>${escapeHtml(latency.name)}</td>`
      + `<td class="num">${latency.count}</td><td class="num">${latency.p50Millis.toFixed(2)}</td>`
      + `<td class="num">${latency.p90Millis.toFixed(2)}</td><td class="num">${latency.p99Millis.toFixed(2)}</td></tr>`)
      .join('')
    : '<tr><td colspan="5" class="dim">no timer publishes percentiles yet</td></tr>';
  const status = document.getElementById('status');
  status.className = 'status live';
  status.textContent = 'live, KV ' + snapshot.kvMode + ' mode, '
    + new Date(snapshot.timeMillis).toLocaleTimeString();
}

const events = new EventSource('dashboard/events');
events.addEventListener('snapshot', event => render(JSON.parse(event.data)));
events.onerror = () => {
  const status = document.getElementById('status');
  status.className = 'status lost';
  status.textContent = 'connection lost, reconnecting…';
};

// The warp step-through: one warp's issued instructions, stepped with the buttons or the
// arrow keys; the page's URL hash (#warp=W&step=S) selects the starting point.
(function () {
  const el = document.getElementById('steps-data');
  if (!el) return;
  const data = JSON.parse(el.textContent);
  const pick = document.getElementById('warp');
  let warp = 0, step = 0;
  data.warps.forEach((w, i) => {
    const o = document.createElement('option');
    o.value = i; o.textContent = w.label + ' (' + w.steps.length + ' instructions)';
    pick.appendChild(o);
  });
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has('warp')) warp = Math.min(Math.max(0, +hash.get('warp') || 0), data.warps.length - 1);
  if (hash.has('step')) step = Math.max(0, +hash.get('step') || 0);
  function lanes(box, n, cls) {
    box.innerHTML = '';
    for (let l = 0; l < n; l++) {
      const d = document.createElement('div');
      const c = cls(l);
      d.className = 'lane ' + c[0];
      d.textContent = c[1];
      d.title = 'lane ' + l;
      box.appendChild(d);
    }
  }
  function render() {
    const w = data.warps[warp];
    step = Math.min(Math.max(0, step), w.steps.length - 1);
    pick.value = warp;
    const s = w.steps[step];
    document.getElementById('step-info').textContent =
      'step ' + (step + 1) + ' / ' + w.steps.length + ' · cycle ' + s.cycle + ' · pc ' + s.pc;
    document.getElementById('step-line').textContent = 'line ' + s.line + ':  ' + s.text;
    const exec = BigInt(s.exec);
    const m = /α=(\S+) δ=(\S+) stack=(.*)/.exec(s.after);
    const n = m ? m[1].length : data.warp_size;
    lanes(document.getElementById('exec'), n, l => ((exec >> BigInt(l)) & 1n) ? ['on', l] : ['off', l]);
    const alpha = document.getElementById('alpha');
    const stack = document.getElementById('stack');
    stack.innerHTML = '';
    if (m) {
      lanes(alpha, n, l => m[1][l] === '1' ? ['on', '1'] : (m[2][l] !== '0' ? [m[2][l], m[2][l]] : ['off', '0']));
      const toks = m[3] === 'ε' ? [] : m[3].split('::');
      if (toks.length === 0) { const li = document.createElement('li'); li.textContent = 'ε (empty)'; stack.appendChild(li); }
      toks.forEach(t => { const li = document.createElement('li'); li.textContent = t; stack.appendChild(li); });
      document.getElementById('state-raw').textContent = '';
    } else {
      alpha.innerHTML = '';
      document.getElementById('state-raw').textContent = s.after;
    }
    const ctx = document.getElementById('context');
    ctx.innerHTML = '';
    for (let k = s.line - 3; k <= s.line + 3; k++) {
      if (k < 1 || k > data.source.length) continue;
      const span = document.createElement('div');
      span.textContent = String(k).padStart(5) + '  ' + data.source[k - 1];
      if (k === s.line) span.className = 'cur';
      ctx.appendChild(span);
    }
    history.replaceState(null, '', '#warp=' + warp + '&step=' + step);
  }
  pick.addEventListener('change', () => { warp = +pick.value; step = 0; render(); });
  document.getElementById('prev').addEventListener('click', () => { step--; render(); });
  document.getElementById('next').addEventListener('click', () => { step++; render(); });
  document.addEventListener('keydown', e => {
    if (e.key === 'ArrowLeft') { step--; render(); }
    if (e.key === 'ArrowRight') { step++; render(); }
  });
  render();
})();

// The page's entry point (bundled by esbuild into /app.js and /app.css).
import 'uplot/dist/uPlot.min.css';
import './style.css';

document.getElementById('app').textContent = 'nodekeeper ui';

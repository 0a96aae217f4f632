import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Relative asset URLs (`./assets/...`): the same build works at /console/ and behind a proxy path (G364).
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, modulePreload: { polyfill: false }, reportCompressedSize: false },
});

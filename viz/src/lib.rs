//! gpusim-viz: charts.

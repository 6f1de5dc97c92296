#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Render the deformed body of a hyperelastic VTU file to a PNG.

Usage: render_vtu.py solution.vtu picture.png [--field von_Mises_stress]
                     [--scale 1] [--elevation 20] [--azimuth -60]

Draws the boundary faces of the deformed tetrahedra or hexahedra, coloured
by a cell field, over the outline of the undeformed body. Needs numpy,
matplotlib and meshio (pip install numpy matplotlib meshio).
"""
import argparse
import sys

import numpy as np


def boundary_faces(points, cells, cell_type):
    """Faces of the cells that belong to one cell only, as index tuples."""
    if cell_type == "tetra":
        local = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    elif cell_type == "hexahedron":
        local = [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4),
                 (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    else:
        sys.exit("render_vtu.py: cells of type %s are not supported" % cell_type)
    count, owner = {}, {}
    for c, cell in enumerate(cells):
        for face in local:
            nodes = tuple(cell[list(face)])
            key = tuple(sorted(nodes))
            count[key] = count.get(key, 0) + 1
            owner[key] = (c, nodes)
    return [owner[k] for k, n in count.items() if n == 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vtu")
    parser.add_argument("png")
    parser.add_argument("--field", default="von_Mises_stress")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="displacement magnification")
    parser.add_argument("--elevation", type=float, default=20)
    parser.add_argument("--azimuth", type=float, default=-60)
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import meshio
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    mesh = meshio.read(args.vtu)
    block = mesh.cells[0]
    # deal.II writes every cell with its own copy of its vertices: merge
    # them by position so that shared faces can be recognised.
    rounded = np.round(mesh.points / (np.ptp(mesh.points) + 1e-300), 9)
    unique, inverse = np.unique(rounded, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    reference = np.zeros((len(unique), 3))
    reference[inverse] = mesh.points
    displacement = np.zeros((len(unique), 3))
    displacement[inverse] = mesh.point_data["displacement"]
    if args.field not in mesh.point_data:
        sys.exit("render_vtu.py: no field %s in %s (have: %s)" %
                 (args.field, args.vtu, ", ".join(mesh.point_data)))
    field_per_point = np.asarray(mesh.point_data[args.field]).reshape(-1)
    cells = inverse[block.data]
    cell_field = field_per_point[block.data].mean(axis=1)

    faces = boundary_faces(reference, cells, block.type)
    deformed = reference + args.scale * displacement
    polygons = [deformed[list(nodes)] for _, nodes in faces]
    values = np.array([cell_field[c] for c, _ in faces])

    figure = plt.figure(figsize=(10, 6), dpi=120)
    axes = figure.add_subplot(projection="3d")
    colormap = plt.get_cmap("viridis")
    norm = matplotlib.colors.Normalize(values.min(), values.max())
    collection = Poly3DCollection(polygons, facecolors=colormap(norm(values)),
                                  edgecolors=(0, 0, 0, 0.15), linewidths=0.2)
    axes.add_collection3d(collection)
    outline = Poly3DCollection([reference[list(nodes)] for _, nodes in faces],
                               facecolors=(0, 0, 0, 0),
                               edgecolors=(0.5, 0.5, 0.5, 0.05),
                               linewidths=0.2)
    axes.add_collection3d(outline)
    everything = np.vstack([reference, deformed])
    low, high = everything.min(axis=0), everything.max(axis=0)
    centre, half = (low + high) / 2, (high - low).max() / 2
    for set_limits, c in zip((axes.set_xlim, axes.set_ylim, axes.set_zlim),
                             centre):
        set_limits(c - half, c + half)
    axes.set_box_aspect((1, 1, 1))
    axes.view_init(args.elevation, args.azimuth)
    axes.set_xlabel("x")
    axes.set_ylabel("y")
    axes.set_zlabel("z")
    mappable = plt.cm.ScalarMappable(norm=norm, cmap=colormap)
    figure.colorbar(mappable, ax=axes, shrink=0.6,
                    label=args.field.replace("_", " "))
    axes.set_title(args.title or args.vtu)
    figure.savefig(args.png, bbox_inches="tight")
    print("wrote", args.png, "(%d boundary faces)" % len(faces))


if __name__ == "__main__":
    main()

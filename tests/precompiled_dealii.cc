// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The translation unit that builds the test programs' precompiled header
// (precompiled_dealii.h); it defines nothing.

"""Small inline scenes for the controller tests: a push box, a drawer and a knob."""

from __future__ import annotations

ARTICULATED = """
<mujoco model="articulated">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.002" integrator="implicitfast" cone="elliptic" impratio="10"/>
  <worldbody>
    <light pos="0.3 0 2" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="table" pos="0.33 0 0.73">
      <geom name="table_top" type="box" size="0.45 0.5 0.02" rgba="0.7 0.6 0.4 1"/>
    </body>
    <site name="arm_mount" pos="0 0 0.75"/>
    <body name="puck" pos="0.35 -0.2 0.775">
      <freejoint/>
      <geom name="puck" type="box" size="0.025 0.025 0.025" mass="0.15" friction="0.6 0.01 0.001"
            rgba="0.9 0.5 0.1 1"/>
    </body>
    <body name="cabinet" pos="0.6 0.12 0.81">
      <geom type="box" size="0.12 0.12 0.005" pos="0 0 -0.055" rgba="0.5 0.4 0.3 1"/>
      <geom type="box" size="0.12 0.12 0.005" pos="0 0 0.055" rgba="0.5 0.4 0.3 1"/>
      <geom type="box" size="0.12 0.005 0.06" pos="0 0.125 0" rgba="0.5 0.4 0.3 1"/>
      <geom type="box" size="0.12 0.005 0.06" pos="0 -0.125 0" rgba="0.5 0.4 0.3 1"/>
      <geom type="box" size="0.005 0.12 0.06" pos="0.125 0 0" rgba="0.5 0.4 0.3 1"/>
      <body name="drawer" pos="0 0 0">
        <joint name="drawer_slide" type="slide" axis="-1 0 0" range="0 0.2" damping="4"/>
        <geom type="box" size="0.11 0.11 0.004" pos="0 0 -0.045" mass="0.3" rgba="0.8 0.7 0.5 1"/>
        <geom type="box" size="0.004 0.11 0.045" pos="-0.115 0 0" mass="0.1" rgba="0.8 0.7 0.5 1"/>
        <geom type="box" size="0.004 0.11 0.045" pos="0.105 0 0" mass="0.1" rgba="0.8 0.7 0.5 1"/>
        <geom type="box" size="0.11 0.004 0.04" pos="0 0.105 0" mass="0.1" rgba="0.8 0.7 0.5 1"/>
        <geom type="box" size="0.11 0.004 0.04" pos="0 -0.105 0" mass="0.1" rgba="0.8 0.7 0.5 1"/>
        <geom type="box" size="0.025 0.005 0.005" pos="-0.143 0.05 0" mass="0.02"/>
        <geom type="box" size="0.025 0.005 0.005" pos="-0.143 -0.05 0" mass="0.02"/>
        <body name="drawer_handle" pos="-0.17 0 0">
          <geom type="box" size="0.0075 0.06 0.0075" mass="0.05" rgba="0.2 0.2 0.2 1"/>
        </body>
      </body>
    </body>
    <body name="knob_base" pos="0.3 0.33 0.765">
      <geom type="cylinder" size="0.01 0.015" rgba="0.4 0.4 0.4 1"/>
      <body name="knob" pos="0 0 0.0275">
        <joint name="knob_hinge" type="hinge" axis="0 0 1" damping="0.02" frictionloss="0.02"/>
        <geom type="cylinder" size="0.017 0.0125" mass="0.03" friction="1 0.02 0.002" condim="4"
              rgba="0.8 0.1 0.1 1"/>
        <geom type="box" size="0.016 0.003 0.002" pos="0 0 0.0135" mass="0.001"
              rgba="1 1 1 1" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
